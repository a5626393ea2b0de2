"""The buffer service's state: one `BufferState` per buffer in a changelog-backed faust table.

The transitions are pure (`mnemo.stages.buffer`); this module only stores their results and
delivers a pending flush: produce it, wait for the broker's acknowledgement, then clear it.
A state is written to the changelog (and flushed) before anything that depends on it is
produced, so a crash at any point re-delivers rather than loses. Items of erased users are
swept out on ticks: the table can only be written inside its partition's stream.
"""

from __future__ import annotations

from collections.abc import Iterator

import faust
from faust.types import TableT

from mnemo import metrics
from mnemo.core.groups import GroupCache
from mnemo.domain.group import GroupConfig
from mnemo.events.channels import ChannelKind
from mnemo.kafka.app import json_schema
from mnemo.kafka.channels import changelog_configs
from mnemo.kafka.metrics import BUFFERED_RUNS
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.sweeps import SweepSchedule
from mnemo.kafka.timers import guarded
from mnemo.stages import buffer as stage
from mnemo.stages.buffer import BufferState
from mnemo.store import erasure, tombstones
from mnemo.tracing.pipeline import batch_attributes, record_span


class BufferTable:
    def __init__(self, rt: Runtime, table: TableT) -> None:
        self.rt = rt
        self.table = table
        self.sweeps = SweepSchedule(rt.settings.retention_sweep_seconds)

    @classmethod
    def attach(cls, app: faust.App, rt: Runtime) -> BufferTable:
        """The `buffers` table of `app`, co-partitioned with the pipeline channels."""
        table = app.Table(
            "buffers",
            partitions=rt.ks.partitions,
            schema=json_schema(),
            extra_topic_configs=changelog_configs(rt.ks),
        )
        return cls(rt, table)

    def load(self, key: str) -> BufferState | None:
        raw = self.table.get(key)
        return BufferState.model_validate(raw) if raw else None

    def states(self, partition: int) -> Iterator[tuple[str, BufferState]]:
        """The buffers of one partition (the one whose tick is being processed)."""
        for key, raw in list(self.table.items()):
            state = BufferState.model_validate(raw)
            if state.partition == partition:
                yield key, state

    async def save(self, key: str, state: BufferState) -> None:
        """Write the state and wait until its changelog record is on the broker."""
        self.table[key] = state.model_dump(mode="json")
        await self.rt.app.producer.flush()

    async def deliver(self, key: str, state: BufferState, group: GroupConfig) -> BufferState:
        """Produce the pending flushes (if any), wait for the acks, then clear them."""
        if not state.pending:
            return state
        for pending in state.pending:
            attributes = batch_attributes(pending.batch)
            with record_span("mnemo.flush", pending.traces, attributes):
                await self.rt.emit(stage.delivery(pending, group))
        state = stage.acknowledged(state)
        await self.save(key, state)
        return state

    async def recover(self, key: str, group: GroupConfig) -> BufferState | None:
        """The buffer's state, after delivering a flush a crash left pending."""
        state = self.load(key)
        return await self.deliver(key, state, group) if state is not None else None

    async def sweep(self, partition: int) -> None:
        """Remove the items of erased users' runs from the partition's buffers (an erase
        cannot reach this table; the runs are redacted if the erase missed them)."""
        held = {i.run_id for _, state in self.states(partition) for i in state.items}
        if not held:
            return
        deps = await self.rt.deps()
        async with deps.db.begin() as tx:
            erased = await tombstones.erased_among(tx, held)
            await erasure.redact_erased_runs(tx, erased, deps.clock.now())
        for key, state in self.states(partition):
            kept = stage.without_runs(state, erased)
            if kept is not state:
                await self.save(key, kept)

    async def tick(self, partition: int, groups: GroupCache) -> None:
        """Sweep erased runs out (when an erase happened since), apply the time triggers to
        the partition's buffers and deliver what flushed."""
        db = (await self.rt.deps()).db
        await self.sweeps.run(db, partition, lambda: self.sweep(partition))
        held, now = 0, self.rt.clock.now()
        for key, state in self.states(partition):
            group = await groups.get(state.project, state.group)
            ticked = stage.tick(state, group, stage.batch_buffer(group, state.step_id), now)
            if ticked is not state:
                await self.save(key, ticked)
            held += len((await self.deliver(key, ticked, group)).items)
        BUFFERED_RUNS.labels(service=self.rt.service).set(held)
        metrics.BUFFER_ITEMS.set(held)


def publish_ticks(app: faust.App, rt: Runtime, ticks_topic: str, every_seconds: float) -> None:
    """A timer that sends a tick to each ticks partition this worker owns, so that time
    triggers are checked inside the stream of the partition whose table they change."""

    @app.timer(every_seconds)
    @guarded(f"{rt.service}: tick timer", rt.ks.transient_backoff_seconds)
    async def tick() -> None:
        owned = {tp.partition for tp in app.consumer.assignment() if tp.topic == ticks_topic}
        for partition in sorted(owned):
            await rt.channels[ChannelKind.ticks].send(key=b"tick", value=b"{}", partition=partition)
