"""Buffer: hold extracted items per scope in a faust table until a trigger fires.

Count and topics-present triggers fire on arrival; idle, since-first and interval triggers
fire on ticks that a timer publishes to each partition this worker owns (a table can only
change inside the stream of its partition). A flush is written to the table (and flushed to
its changelog) before the batch is produced, and cleared once the batch is acknowledged.
"""

from __future__ import annotations

from datetime import UTC, datetime

import faust
from faust.types import TableT

from mnemo import metrics
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import BufferStep
from mnemo.events.codec import decode
from mnemo.events.stage import StageEvent
from mnemo.events.status import RunStatusEvent
from mnemo.events.topics import TopicKind
from mnemo.kafka import metrics as kmetrics
from mnemo.kafka.app import json_schema, make_app
from mnemo.kafka.handler import Incoming, handle
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.settings import KafkaSettings
from mnemo.kafka.topics import topic_names
from mnemo.stages import buffer as stage
from mnemo.stages.routing import Emit

SERVICE = "buffer"


def create_app(ks: KafkaSettings) -> faust.App:
    names = topic_names(ks)
    extracted, ticks = names.name(TopicKind.extracted), names.name(TopicKind.ticks)
    app = make_app(SERVICE, ks, [extracted])
    rt = Runtime(SERVICE, ks, app)
    table = app.Table("buffers", partitions=ks.kafka_partitions, schema=json_schema())
    shell = BufferShell(rt, table)
    source = app.topic(extracted, ticks, key_serializer="raw", value_serializer="raw")

    @app.agent(source)
    async def buffer(stream: faust.StreamT) -> None:
        async for event in stream.events():
            incoming = Incoming.of(event)
            work = shell.on_tick if incoming.topic == ticks else shell.on_item
            await handle(rt, incoming, work)

    @app.timer(ks.kafka_buffer_tick_seconds)
    async def tick() -> None:
        owned = {tp.partition for tp in app.consumer.assignment() if tp.topic == ticks}
        for partition in sorted(owned):
            await rt.topics[TopicKind.ticks].send(key=b"tick", value=b"{}", partition=partition)

    return app


class BufferShell:
    def __init__(self, rt: Runtime, table: TableT) -> None:
        self.rt = rt
        self.table = table

    async def on_item(self, incoming: Incoming) -> list[Emit]:
        event = decode(StageEvent, incoming.value)
        incoming.run_ids, incoming.scope_key = event.batch.run_ids, event.key
        groups, now = await self.rt.groups(), datetime.now(UTC)
        group = await groups.get(event.batch.project, event.batch.group)
        step = group.pipeline.step(event.step_id)
        if not isinstance(step, BufferStep) or step.mode != "batch":
            raise TypeError(f"step '{step.id}' is not a batch buffer")
        key = stage.buffer_key(group.name, step.id, event.key)
        state = self._load(key)
        if state is not None and state.pending is not None:
            state = await self._deliver(key, state, group)
        before = ({i.run_id for i in state.items} | set(state.seen)) if state else set()
        state = stage.take(state, event, incoming.partition, now)
        fresh = [r for r in event.batch.run_ids if r not in before]
        if fresh:
            status = RunStatusEvent(
                run_ids=fresh, status=RunState.in_buffer, scope_key=event.key, at=now,
                service=SERVICE,
            )  # fmt: skip
            await self.rt.emit([Emit(TopicKind.status, event.key, status)])
            metrics.RUNS.labels(status="in_buffer").inc(len(fresh))
        if stage.due(state, step, now) is not None:
            state = stage.flush(state, group, step)
        await self._save(key, state)
        if state.pending is not None:
            await self._deliver(key, state, group)
        return []

    async def on_tick(self, incoming: Incoming) -> list[Emit]:
        groups, now = await self.rt.groups(), datetime.now(UTC)
        held = 0
        for key, raw in list(self.table.items()):
            state = stage.BufferState.model_validate(raw)
            if state.partition != incoming.partition:
                continue
            group = await groups.get(state.project, state.group)
            step = group.pipeline.step(state.step_id)
            assert isinstance(step, BufferStep)
            if state.pending is None and stage.due(state, step, now) is not None:
                state = stage.flush(state, group, step)
                await self._save(key, state)
            if state.pending is not None:
                state = await self._deliver(key, state, group)
            held += len(state.items)
        kmetrics.BUFFERED_RUNS.labels(service=SERVICE).set(held)
        metrics.BUFFER_ITEMS.set(held)
        return []

    async def _deliver(
        self, key: str, state: stage.BufferState, group: GroupConfig
    ) -> stage.BufferState:
        """Produce the pending flush, wait for the ack, then clear it from the table."""
        await self.rt.emit(stage.pending_emits(state, group))
        state = stage.acknowledged(state)
        await self._save(key, state)
        return state

    def _load(self, key: str) -> stage.BufferState | None:
        raw = self.table.get(key)
        return stage.BufferState.model_validate(raw) if raw else None

    async def _save(self, key: str, state: stage.BufferState) -> None:
        """Write the state and wait until its changelog record is on the broker."""
        self.table[key] = state.model_dump(mode="json")
        await self.rt.app.producer.flush()
