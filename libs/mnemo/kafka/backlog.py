"""The backlog in Kafka mode: per channel, the records its stage has not consumed yet
(its consumer group's lag, summed over partitions) and how long the oldest has waited (the
broker timestamp of the record at the group's committed offset).

The gateway measures it when scraped (`mnemo.telemetry.backlog`), from the broker alone, so
it counts every partition once however many replicas consume it, and it stays measurable
while a stage is down, which is when it grows. Offsets are committed every second, so a
drained channel may read a few records for about that long.
"""

from __future__ import annotations

import time

from aiokafka import AIOKafkaConsumer, TopicPartition

from mnemo.core.transport import Backlog
from mnemo.kafka.group_offsets import GroupOffsets
from mnemo.kafka.lag import stage_groups
from mnemo.settings import KafkaSettings

FETCH_TIMEOUT_MS = 2000


def consumers(ks: KafkaSettings) -> dict[str, str]:
    """Each backlog topic (what a stage consumes, `mnemo.kafka.lag.SOURCES`: not the ticks,
    not the DLQ) and the consumer group that consumes it, in pipeline order."""
    return {topic: group for group, topics in stage_groups(ks).items() for topic in topics}


class KafkaBacklog:
    """Measures the backlog of `topics` (topic -> consuming group) on demand."""

    def __init__(self, bootstrap: str, topics: dict[str, str]) -> None:
        self.bootstrap = bootstrap
        self.topics = topics
        groups: dict[str, list[str]] = {}
        for topic, group in topics.items():
            groups.setdefault(group, []).append(topic)
        self.offsets = GroupOffsets(bootstrap, groups)

    async def measure(self) -> list[Backlog]:
        try:
            return await self._measure()
        except BaseException:
            await self.close()  # reconnect on the next call
            raise

    async def _measure(self) -> list[Backlog]:
        positions = await self.offsets.positions()
        behind = {tp: at for (_, tp), at in positions.items() if at.lag}
        _, consumer = await self.offsets.clients()
        stamps = await self._timestamps(consumer, {tp: at.next for tp, at in behind.items()})
        now = time.time()
        out = []
        for topic in self.topics:
            lagging = [tp for tp in behind if tp.topic == topic]
            ages = [now - stamps[tp] for tp in lagging if tp in stamps]
            records = sum(behind[tp].lag for tp in lagging)
            out.append(Backlog(topic, records, max([0.0, *ages])))
        return out

    async def _timestamps(
        self, consumer: AIOKafkaConsumer, offsets: dict[TopicPartition, int]
    ) -> dict[TopicPartition, float]:
        """The broker timestamp (epoch seconds) of the first record at or after each offset."""
        if not offsets:
            return {}
        consumer.assign(list(offsets))
        for tp, offset in offsets.items():
            consumer.seek(tp, offset)
        stamps: dict[TopicPartition, float] = {}
        deadline = time.monotonic() + FETCH_TIMEOUT_MS / 1000
        while len(stamps) < len(offsets) and time.monotonic() < deadline:
            wanted = [tp for tp in offsets if tp not in stamps]
            fetched = await consumer.getmany(*wanted, timeout_ms=200, max_records=1)
            for tp, messages in fetched.items():
                if messages and messages[0].timestamp:
                    stamps[tp] = messages[0].timestamp / 1000
        return stamps

    async def close(self) -> None:
        await self.offsets.close()
