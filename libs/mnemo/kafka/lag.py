"""Consumer lag per topic and partition: the broker's end offset minus the group's commit."""

from __future__ import annotations

import logging

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from mnemo.kafka.metrics import CONSUMER_LAG
from mnemo.kafka.reader import partitions

log = logging.getLogger(__name__)


class LagMonitor:
    """Measures one consumer group's lag on its source topics into `CONSUMER_LAG`."""

    def __init__(self, bootstrap: str, group: str, topics: list[str]) -> None:
        self.bootstrap = bootstrap
        self.group = group
        self.topics = topics
        self._admin: AIOKafkaAdminClient | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._tps: list[TopicPartition] = []

    async def measure(self) -> dict[TopicPartition, int]:
        """Update the gauge and return the lag of every partition of the source topics."""
        admin, consumer = await self._clients()
        if not self._tps:
            found = await partitions(self.bootstrap, self.topics)
            self._tps = [TopicPartition(t, p) for t in self.topics for p in found[t]]
        tps = self._tps
        ends = await consumer.end_offsets(tps)
        committed = await admin.list_consumer_group_offsets(self.group, partitions=tps)
        lags: dict[TopicPartition, int] = {}
        for tp in tps:
            done = committed.get(tp)
            offset = done.offset if done is not None and done.offset >= 0 else 0
            lags[tp] = max(0, ends[tp] - offset)
            CONSUMER_LAG.labels(self.group, tp.topic, str(tp.partition)).set(lags[tp])
        return lags

    async def _clients(self) -> tuple[AIOKafkaAdminClient, AIOKafkaConsumer]:
        if self._admin is None or self._consumer is None:
            admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap)
            consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
            await admin.start()
            await consumer.start()
            self._admin, self._consumer = admin, consumer
        return self._admin, self._consumer

    async def close(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
        if self._admin is not None:
            await self._admin.close()
        self._admin = self._consumer = None
