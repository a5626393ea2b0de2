"""Where consumer groups stand on their topics, read from the broker: the one admin
client and group-less consumer that the backlog (`kafka.backlog`) and the consumer lag
(`kafka.lag`) both measure with.

A group that has not committed on a partition yet counts from the partition's first
retained offset (stages start from the earliest); so does one whose committed offset was
deleted by retention.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from mnemo.kafka.reader import partitions


@dataclass(frozen=True)
class Position:
    """A group on one partition: the next offset it will consume and the end offset."""

    next: int
    end: int

    @property
    def lag(self) -> int:
        return max(0, self.end - self.next)


class GroupOffsets:
    """The positions of `groups` (group -> topics it consumes). The clients open on first
    use; after a failure the caller `close`s them and the next call reconnects."""

    def __init__(self, bootstrap: str, groups: dict[str, list[str]]) -> None:
        self.bootstrap = bootstrap
        self.groups = groups
        self._admin: AIOKafkaAdminClient | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._tps: dict[str, list[TopicPartition]] = {}

    async def positions(self) -> dict[tuple[str, TopicPartition], Position]:
        admin, consumer = await self.clients()
        if not self._tps:
            topics = sorted({t for ts in self.groups.values() for t in ts})
            found = await partitions(self.bootstrap, topics)
            self._tps = {
                g: [TopicPartition(t, p) for t in ts for p in found[t]]
                for g, ts in self.groups.items()
            }
        every = sorted({tp for tps in self._tps.values() for tp in tps})
        ends = await consumer.end_offsets(every)
        firsts = await consumer.beginning_offsets(every)
        out: dict[tuple[str, TopicPartition], Position] = {}
        for group, tps in self._tps.items():
            committed = await admin.list_consumer_group_offsets(group, partitions=tps)
            for tp in tps:
                done = committed.get(tp)
                offset = done.offset if done is not None and done.offset >= 0 else firsts[tp]
                out[(group, tp)] = Position(max(offset, firsts[tp]), ends[tp])
        return out

    async def clients(self) -> tuple[AIOKafkaAdminClient, AIOKafkaConsumer]:
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
