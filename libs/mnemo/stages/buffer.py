"""The buffer's stage: pure state transitions of one (group, buffer step, scope) buffer.

State is a JSON-able `BufferState` that the buffer service keeps in a changelog-backed table.
A flush is first recorded as `pending` in the state, and cleared only once the flushed batch
is acknowledged downstream, so a crash between the two re-emits the same batch (its id is
derived from the runs it holds) instead of losing or re-batching it. Run ids already taken
are remembered, so a redelivered record is not buffered twice.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from pydantic import BaseModel, Field

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate
from mnemo.domain.pipeline import BufferStep
from mnemo.events.stage import StageEvent
from mnemo.stages.routing import Emit, forward
from mnemo.steps.base import Batch
from mnemo.steps.buffer import Buffered, flush_reason

SEEN_LIMIT = 1000


class BufferedRun(BaseModel):
    run_id: str
    added_at: datetime
    started_at: datetime | None = None
    user_id: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    candidates: list[Candidate] = Field(default_factory=list)


class BufferState(BaseModel):
    project: str
    group: str
    step_id: str
    scope_key: str
    partition: int
    items: list[BufferedRun] = Field(default_factory=list)
    seen: list[str] = Field(default_factory=list)
    pending: StageEvent | None = None


def buffer_key(group: str, step_id: str, scope_key: str) -> str:
    return f"{group}|{step_id}|{scope_key}"


def take(
    state: BufferState | None, event: StageEvent, partition: int, now: datetime
) -> BufferState:
    """Add the event's runs to the buffer, skipping runs it already holds or flushed."""
    b = event.batch
    state = state or BufferState(
        project=b.project, group=b.group, step_id=event.step_id, scope_key=b.scope_key,
        partition=partition,
    )  # fmt: skip
    known = set(state.seen) | {i.run_id for i in state.items}
    fresh = [r for r in b.run_ids if r not in known]
    if not fresh:
        return state
    items = list(state.items)
    for run_id in fresh:
        items.append(
            BufferedRun(
                run_id=run_id,
                added_at=now,
                started_at=event.run_started.get(run_id),
                user_id=b.user_id,
                properties=b.properties,
                candidates=[c for c in b.candidates if c.run_id == run_id or len(fresh) == 1],
            )
        )
    return state.model_copy(update={"items": items})


def due(state: BufferState, step: BufferStep, now: datetime) -> str | None:
    """The trigger that fires now (the embedded engine's `flush_reason`), or None."""
    assert step.triggers is not None
    held = [Buffered(item.added_at, c.topic) for item in state.items for c in item.candidates] + [
        Buffered(item.added_at, None) for item in state.items if not item.candidates
    ]
    return flush_reason(step.triggers, held, now)


def flush(state: BufferState, group: GroupConfig, step: BufferStep) -> BufferState:
    """Empty the buffer into one batch for the next step, recorded as `pending`."""
    run_ids = list(dict.fromkeys(i.run_id for i in state.items))
    digest = hashlib.sha256(
        f"{buffer_key(state.group, state.step_id, state.scope_key)}|{','.join(run_ids)}".encode()
    ).hexdigest()[:32]
    first = state.items[0]
    batch = Batch(
        batch_id=f"flush-{digest}",
        project=state.project,
        group=state.group,
        scope_key=state.scope_key,
        run_ids=run_ids,
        user_id=first.user_id,
        properties=first.properties,
        candidates=[c for item in state.items for c in item.candidates],
    )
    started = {i.run_id: i.started_at for i in state.items if i.started_at is not None}
    following = group.pipeline.following(step)
    emits = forward(following, batch, started)
    assert emits, f"buffer '{step.id}' has no next step"
    pending = emits[0].record
    assert isinstance(pending, StageEvent)
    seen = [*state.seen, *run_ids][-SEEN_LIMIT:]
    return state.model_copy(update={"items": [], "seen": seen, "pending": pending})


def pending_emits(state: BufferState, group: GroupConfig) -> list[Emit]:
    """The records that deliver the state's pending flush."""
    if state.pending is None:
        return []
    return forward(
        group.pipeline.step(state.pending.step_id), state.pending.batch, state.pending.run_started
    )


def acknowledged(state: BufferState) -> BufferState:
    return state.model_copy(update={"pending": None})
