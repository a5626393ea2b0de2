"""The buffer service's state: one `BufferState` per buffer in a changelog-backed faust table.

The transitions are pure (`mnemo.kafka.stages.buffer`); this module only stores their results and
delivers a pending flush: produce it, wait for the broker's acknowledgement, then clear it.
A state is written to the changelog (and flushed) before anything that depends on it is
produced, so a crash at any point re-delivers rather than loses. Items of erased users are
swept out on ticks: the table can only be written inside its partition's stream.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import faust
from faust.types import TableT

from mnemo import metrics
from mnemo.core.groups import GroupCache
from mnemo.core.stale_buffers import current_buffer, fail_held_runs
from mnemo.core.withdrawal import withdraw_erased
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import MissingStep
from mnemo.domain.requests import NotFound
from mnemo.kafka.app import json_schema
from mnemo.kafka.channels import changelog_configs
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.handler import Incoming
from mnemo.kafka.metrics import BUFFERED_RUNS
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.stages import buffer as stage
from mnemo.kafka.stages.buffer import BufferState
from mnemo.kafka.sweeps import SweepSchedule
from mnemo.kafka.timers import guarded, transient_waits
from mnemo.tracing.pipeline import batch_attributes, record_span

log = logging.getLogger(__name__)


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

    async def arrive(self, event: StageEvent, group: GroupConfig, incoming: Incoming) -> None:
        """An extracted batch joins its buffer: recover the buffer, apply the arrival (count
        and topics triggers fire here), publish what it emits, then store and deliver."""
        step = stage.batch_buffer(group, event.step_id)
        key = stage.buffer_key(group.name, step.id, event.scope_key)
        state = await self.recover(key, group)
        if state is not None and state.items:
            # A user erased since these items arrived: drop them now, before new items of the
            # same user join them (the tick's sweep may not have run yet), so the next flush
            # holds nothing erased and is not withdrawn whole.
            deps = await self.rt.deps()
            async with deps.db.begin() as tx:
                erased = await withdraw_erased(
                    tx, {i.run_id for i in state.items}, deps.clock.now()
                )
            if erased:
                state = stage.without_runs(state, erased)
                await self.save(key, state)
        arrival = stage.arrive(state, event, group, step, incoming.partition, self.rt.clock.now(),
                               self.rt.service, incoming.trace)  # fmt: skip
        await self.rt.emit(arrival.emits)
        metrics.RUNS.labels(status=RunState.in_buffer.value).inc(len(arrival.fresh))
        await self.save(key, arrival.state)
        await self.deliver(key, arrival.state, group)

    async def sweep(self, partition: int) -> None:
        """Remove the items of erased users' runs from the partition's buffers (an erase
        cannot reach this table; the runs are redacted if the erase missed them)."""
        held = {i.run_id for _, state in self.states(partition) for i in state.items}
        if not held:
            return
        deps = await self.rt.deps()
        async with deps.db.begin() as tx:
            erased = await withdraw_erased(tx, held, deps.clock.now())
        for key, state in self.states(partition):
            kept = stage.without_runs(state, erased)
            if kept is not state:
                await self.save(key, kept)

    async def give_up(
        self, key: str, state: BufferState, group: GroupConfig, exc: Exception
    ) -> None:
        """The group no longer has this buffer (`core.stale_buffers`): fail the runs it
        holds, deliver what it had flushed already, and drop it."""
        deps = await self.rt.deps()
        async with deps.db.begin() as tx:
            await fail_held_runs(tx, [i.run_id for i in state.items], exc, deps.clock.now())
        await self.deliver(key, state.model_copy(update={"items": []}), group)
        self.table.pop(key, None)
        await self.rt.app.producer.flush()
        log.warning("buffer %s given up: %s", key, exc)

    async def tick(self, partition: int, groups: GroupCache) -> None:
        """Sweep erased runs out (when an erase happened since), apply the time triggers to
        the partition's buffers and deliver what flushed."""
        db = (await self.rt.deps()).db
        await self.sweeps.run(db, partition, lambda: self.sweep(partition))
        held, now = 0, self.rt.clock.now()
        for key, state in self.states(partition):
            try:
                group = await groups.get(state.project, state.group)
            except NotFound:  # a deleted group's buffer: left as the embedded ticker does
                continue
            try:
                step = stage.batch_buffer(group, current_buffer(group, state.step_id).id)
            except (MissingStep, TypeError) as exc:
                await self.give_up(key, state, group, exc)
                continue
            ticked = stage.tick(state, group, step, now)
            if ticked is not state:
                await self.save(key, ticked)
            held += len((await self.deliver(key, ticked, group)).items)
        BUFFERED_RUNS.labels(service=self.rt.service).set(held)
        metrics.BUFFER_ITEMS.set(held)


def publish_ticks(app: faust.App, rt: Runtime, ticks_topic: str, every_seconds: float) -> None:
    """A timer that sends a tick to each ticks partition this worker owns, so that time
    triggers are checked inside the stream of the partition whose table they change."""

    @app.timer(every_seconds)
    @guarded(f"{rt.service}: tick timer", *transient_waits(rt.settings))
    async def tick() -> None:
        owned = {tp.partition for tp in app.consumer.assignment() if tp.topic == ticks_topic}
        for partition in sorted(owned):
            await rt.channels[ChannelKind.ticks].send(key=b"tick", value=b"{}", partition=partition)
