"""The buffer's stage: pure state transitions of one (group, buffer step, scope) buffer.

State is a JSON-able `BufferState` that the buffer service keeps in a changelog-backed table.
A flush is first recorded as `pending` in the state, and cleared only once the flushed batch
is acknowledged downstream, so a crash between the two re-emits the same batch (its id is
derived from the runs it holds) instead of losing or re-batching it. Run ids already taken
are remembered, so a redelivered record is not buffered twice. The trigger and batch rules
are the core's (`mnemo.steps.buffering`), shared with the embedded transport.

The service applies the transitions in this order: deliver pending flushes left by a crash
(`pending_emits`, then `acknowledged`) before anything else, `arrive` (publish its status
events), save, and deliver the flushes `arrive` may have recorded; on a tick, `tick`.
Triggers follow the buffer's event-time watermark, with the wall clock as a fallback.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from mnemo.core.flush_ids import buffer_key as buffer_key  # services.buffer keys its table
from mnemo.core.flush_ids import flush_id
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, RunState
from mnemo.domain.pipeline import BufferStep
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.events.status import RunStatusEvent
from mnemo.kafka.stages.routing import Emit, forward
from mnemo.steps.buffering import Held, advance, flush_batch, flush_before, flush_reason, items_of
from mnemo.tracing.pipeline import unique_traces

SEEN_LIMIT = 1000


class BufferedRun(BaseModel):
    run_id: str
    added_at: datetime
    started_at: datetime | None = None
    user_id: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    candidates: list[Candidate] = Field(default_factory=list)
    # The run's input time (its batch's event_time).
    event_time: datetime | None = None
    # The run's trace context (W3C carrier), continued by the flush that takes it.
    trace: dict[str, str] = Field(default_factory=dict)


class BufferState(BaseModel):
    project: str
    group: str
    step_id: str
    scope_key: str
    partition: int
    items: list[BufferedRun] = Field(default_factory=list)
    seen: list[str] = Field(default_factory=list)
    # Flushed batches not yet acknowledged downstream, in order (an arrival may close the
    # buffer's batch and start one that is due at once).
    pending: list[StageEvent] = Field(default_factory=list)
    # The latest event time the buffer has taken in (core.buffering).
    watermark: datetime | None = None

    @field_validator("pending", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        """A state saved by an older buffer service holds one pending flush, or null."""
        if value is None:
            return []
        return value if isinstance(value, list) else [value]


def batch_buffer(group: GroupConfig, step_id: str) -> BufferStep:
    """The batch buffer step `step_id` of the group's pipeline (TypeError for another step)."""
    step = group.step(step_id)
    if not isinstance(step, BufferStep) or step.mode != "batch":
        raise TypeError(f"step '{step.id}' is not a batch buffer")
    return step


def take(
    state: BufferState | None,
    event: StageEvent,
    partition: int,
    now: datetime,
    trace: dict[str, str] | None = None,
) -> BufferState:
    """Add the event's runs (whose trace context is `trace`) to the buffer, skipping runs
    it already holds or flushed."""
    b = event.batch
    state = state or BufferState(
        project=b.project, group=b.group, step_id=event.step_id, scope_key=b.scope_key,
        partition=partition,
    )  # fmt: skip
    known = set(state.seen) | {i.run_id for i in state.items}
    fresh = [r for r in b.run_ids if r not in known]
    if not fresh:
        return state
    arriving = _runs(event, fresh, now, trace or {})
    watermark = advance(state.watermark, items_of(_held(arriving)))
    return state.model_copy(update={"items": [*state.items, *arriving], "watermark": watermark})


def _runs(
    event: StageEvent, fresh: list[str], now: datetime, trace: dict[str, str] | None = None
) -> list[BufferedRun]:
    b = event.batch
    return [
        BufferedRun(
            run_id=run_id,
            added_at=now,
            started_at=event.run_started.get(run_id),
            user_id=b.user_id,
            properties=b.properties,
            candidates=[c for c in b.candidates if c.run_id == run_id or len(fresh) == 1],
            event_time=b.event_time,
            trace=trace or {},
        )
        for run_id in fresh
    ]


def due(state: BufferState, step: BufferStep, now: datetime) -> str | None:
    """The trigger that fires now, or None."""
    assert step.triggers is not None
    return flush_reason(step.triggers, items_of(_held(state.items)), now, state.watermark)


def closes(state: BufferState, event: StageEvent, step: BufferStep, now: datetime) -> str | None:
    """Whether the event's new runs close the batch the buffer holds (`flush_before`)."""
    assert step.triggers is not None
    known = set(state.seen) | {i.run_id for i in state.items}
    arriving = _runs(event, [r for r in event.batch.run_ids if r not in known], now)
    return flush_before(
        step.triggers, items_of(_held(state.items)), state.watermark,
        items_of(_held(arriving)), now,
    )  # fmt: skip


def flush(state: BufferState, group: GroupConfig, step: BufferStep) -> BufferState:
    """Empty the buffer into one batch for the next step, appended to `pending`."""
    held = _held(state.items)
    run_ids = list(dict.fromkeys(h.run_id for h in held))
    batch_id = flush_id(state.group, state.step_id, state.scope_key, run_ids)
    batch = flush_batch(batch_id, state.project, state.group, state.scope_key, held)
    started = {i.run_id: i.started_at for i in state.items if i.started_at is not None}
    emits = forward(group.pipeline.following(step), batch, started)
    assert emits, f"buffer '{step.id}' has no next step"
    pending = emits[0].record
    assert isinstance(pending, StageEvent)
    pending = pending.model_copy(update={"traces": unique_traces([i.trace for i in state.items])})
    seen = [*state.seen, *run_ids][-SEEN_LIMIT:]
    return state.model_copy(
        update={"items": [], "seen": seen, "pending": [*state.pending, pending]}
    )


def _held(runs: list[BufferedRun]) -> list[Held]:
    return [
        Held(i.run_id, i.added_at, i.user_id, i.properties, i.candidates, i.event_time)
        for i in runs
    ]


@dataclass(frozen=True)
class Arrival:
    """What an arriving record did: the state to save, and the run-status events (the
    runs that are new to the buffer are `in_buffer`) to publish before saving it."""

    state: BufferState
    fresh: list[str]
    emits: list[Emit]


def arrive(
    state: BufferState | None,
    event: StageEvent,
    group: GroupConfig,
    step: BufferStep,
    partition: int,
    now: datetime,
    service: str,
    trace: dict[str, str] | None = None,
) -> Arrival:
    """Take the event's runs into the buffer, flushing (as `pending`) what it held first if
    they close it, and what it holds then if a trigger fires. `state` must have no pending
    flush: deliver that first."""
    assert state is None or not state.pending, "deliver the pending flush first"
    known = (set(state.seen) | {i.run_id for i in state.items}) if state else set()
    fresh = [r for r in event.batch.run_ids if r not in known]
    if state is not None and closes(state, event, step, now) is not None:
        state = flush(state, group, step)
    state = take(state, event, partition, now, trace)
    emits = []
    if fresh:
        status = RunStatusEvent(
            run_ids=fresh,
            status=RunState.in_buffer,
            scope_key=event.scope_key,
            at=now,
            service=service,
        )
        emits.append(Emit(ChannelKind.status, event.scope_key, status))
    if due(state, step, now) is not None:
        state = flush(state, group, step)
    return Arrival(state, fresh, emits)


def tick(state: BufferState, group: GroupConfig, step: BufferStep, now: datetime) -> BufferState:
    """A time trigger check: flush (as `pending`) if one fires and no flush is pending."""
    if not state.pending and due(state, step, now) is not None:
        return flush(state, group, step)
    return state


def pending_emits(state: BufferState, group: GroupConfig) -> list[Emit]:
    """The records that deliver the state's pending flushes, in order."""
    return [emit for p in state.pending for emit in delivery(p, group)]


def delivery(pending: StageEvent, group: GroupConfig) -> list[Emit]:
    """The record that delivers one pending flush."""
    return forward(group.step(pending.step_id), pending.batch, pending.run_started)


def acknowledged(state: BufferState) -> BufferState:
    return state.model_copy(update={"pending": []})


def without_runs(state: BufferState, run_ids: Collection[str]) -> BufferState:
    """The state minus the items of these runs (an erased user's); the same object when it
    holds none of them. Pending flushes are left to their delivery (the commit drops them)."""
    kept = [i for i in state.items if i.run_id not in run_ids]
    if len(kept) == len(state.items):
        return state
    return state.model_copy(update={"items": kept})
