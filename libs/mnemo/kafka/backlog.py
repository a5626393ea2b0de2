"""The backlog in Kafka mode: per channel, the records its stage has not consumed yet
(its consumer group's lag, summed over partitions) and how long the oldest has waited (the
broker timestamp of the record at the group's committed offset).

The gateway measures it when scraped (`mnemo.telemetry.backlog`), from the broker alone, so
it counts every partition once however many replicas consume it, and it stays measurable
while a stage is down, which is when it grows. Offsets are committed every second, so a
drained channel may read a few records for about that long.
"""

from __future__ import annotations

import contextlib
import time

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from mnemo.core.transport import Backlog
from mnemo.kafka.lag import stage_groups
from mnemo.kafka.reader import partitions
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
        self._tps: list[TopicPartition] = []
        self._admin: AIOKafkaAdminClient | None = None
        self._consumer: AIOKafkaConsumer | None = None

    async def measure(self) -> list[Backlog]:
        try:
            return await self._measure()
        except BaseException:
            await self.close()  # reconnect on the next call
            raise

    async def _measure(self) -> list[Backlog]:
        admin, consumer = await self._clients()
        if not self._tps:
            found = await partitions(self.bootstrap, list(self.topics))
            self._tps = [TopicPartition(t, p) for t in self.topics for p in found[t]]
        ends = await consumer.end_offsets(self._tps)
        firsts = await consumer.beginning_offsets(self._tps)
        behind: dict[TopicPartition, tuple[int, int]] = {}  # tp -> (next offset, lag)
        for group in set(self.topics.values()):
            tps = [tp for tp in self._tps if self.topics[tp.topic] == group]
            committed = await admin.list_consumer_group_offsets(group, partitions=tps)
            for tp in tps:
                done = committed.get(tp)
                start = max(done.offset if done is not None else -1, firsts[tp])
                if ends[tp] > start:
                    behind[tp] = (start, ends[tp] - start)
        stamps = await self._timestamps(consumer, {tp: at for tp, (at, _) in behind.items()})
        now = time.time()
        out = []
        for topic in self.topics:
            lagging = [tp for tp in behind if tp.topic == topic]
            ages = [now - stamps[tp] for tp in lagging if tp in stamps]
            records = sum(behind[tp][1] for tp in lagging)
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

    async def _clients(self) -> tuple[AIOKafkaAdminClient, AIOKafkaConsumer]:
        if self._admin is None or self._consumer is None:
            admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap)
            consumer = AIOKafkaConsumer(
                bootstrap_servers=self.bootstrap, enable_auto_commit=False, group_id=None
            )
            await admin.start()
            await consumer.start()
            self._admin, self._consumer = admin, consumer
        return self._admin, self._consumer

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._consumer is not None:
                await self._consumer.stop()
            if self._admin is not None:
                await self._admin.close()
        self._admin = self._consumer = None
