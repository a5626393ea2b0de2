"""The buffer service's state transitions, without a broker: pure functions of the state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mnemo.domain.memory import Candidate, RunState
from mnemo.domain.pipeline import BufferStep
from mnemo.domain.templates import group_from_document
from mnemo.events.channels import ChannelKind
from mnemo.events.stage import StageEvent
from mnemo.events.status import RunStatusEvent
from mnemo.stages import buffer as stage
from mnemo.steps.base import Batch

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
GROUP = group_from_document("kt", {
    "topics": [{"name": "Facts", "description": "Facts.", "scoping": {"user_scoped": True}}],
    "pipeline": {"steps": [
        {"id": "extract", "kind": "extract", "input_type": "string", "next": "hold"},
        {"id": "hold", "kind": "buffer", "triggers": {"count": 3, "idle_seconds": 60},
         "next": "reconcile"},
        {"id": "reconcile", "kind": "transform_with_context", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
})  # fmt: skip
STEP = stage.batch_buffer(GROUP, "hold")


def arriving(*run_ids: str, facts: int = 1) -> StageEvent:
    candidates = [
        Candidate(content=f"{r} fact {i}", topic="Facts", user_id="u", run_id=r)
        for r in run_ids
        for i in range(facts)
    ]
    batch = Batch(batch_id=run_ids[0], project="p", group="kt", scope_key="s", run_ids=list(run_ids),
                  user_id="u", candidates=candidates)  # fmt: skip
    return StageEvent(step_id="hold", batch=batch, run_started={r: T0 for r in run_ids})


def arrive(state: stage.BufferState | None, event: StageEvent, at: datetime) -> stage.Arrival:
    return stage.arrive(state, event, GROUP, STEP, partition=2, now=at, service="buffer")


def test_a_new_run_is_held_and_reported_in_buffer() -> None:
    arrival = arrive(None, arriving("r1"), T0)
    assert [i.run_id for i in arrival.state.items] == ["r1"]
    assert arrival.state.partition == 2 and arrival.state.pending is None
    assert arrival.fresh == ["r1"]
    [emit] = arrival.emits
    assert emit.kind == ChannelKind.status and emit.scope_key == "s"
    assert isinstance(emit.record, RunStatusEvent) and emit.record.status == RunState.in_buffer
    assert emit.record.run_ids == ["r1"] and emit.record.at == T0


def test_a_redelivered_run_is_neither_held_twice_nor_reported_again() -> None:
    state = arrive(None, arriving("r1"), T0).state
    again = arrive(state, arriving("r1"), T0 + timedelta(seconds=1))
    assert again.fresh == [] and again.emits == []
    assert [i.run_id for i in again.state.items] == ["r1"]


def test_the_count_trigger_records_a_pending_flush_in_arrival_order() -> None:
    state = arrive(None, arriving("r1"), T0).state
    state = arrive(state, arriving("r2"), T0 + timedelta(seconds=1)).state
    flushed = arrive(state, arriving("r3"), T0 + timedelta(seconds=2))
    assert flushed.fresh == ["r3"]  # reported before the flush is delivered
    state = flushed.state
    assert state.items == [] and state.seen == ["r1", "r2", "r3"]
    assert state.pending is not None and state.pending.step_id == "reconcile"
    assert state.pending.batch.run_ids == ["r1", "r2", "r3"]
    assert state.pending.run_started == {"r1": T0, "r2": T0, "r3": T0}
    assert state.pending.batch.batch_id.startswith("flush-")
    # The flushed runs count as seen: a late redelivery is not buffered again.
    late = arrive(stage.acknowledged(state), arriving("r2"), T0 + timedelta(seconds=3))
    assert late.fresh == [] and late.state.items == []


def test_a_flush_id_depends_only_on_its_runs() -> None:
    def flushed_id() -> str:
        state = None
        for i, run in enumerate(("r1", "r2", "r3")):
            state = arrive(state, arriving(run), T0 + timedelta(seconds=i)).state
        assert state is not None and state.pending is not None
        return state.pending.batch.batch_id

    assert flushed_id() == flushed_id()  # a crash that re-flushes sends the same batch id


def test_a_pending_flush_is_delivered_before_anything_else() -> None:
    state = None
    for i, run in enumerate(("r1", "r2", "r3")):
        state = arrive(state, arriving(run), T0 + timedelta(seconds=i)).state
    assert state is not None
    with pytest.raises(AssertionError, match="pending"):
        arrive(state, arriving("r4"), T0)
    [emit] = stage.pending_emits(state, GROUP)
    assert emit.kind == ChannelKind.drafts  # transform_with_context runs in the committer
    assert emit.record == state.pending
    cleared = stage.acknowledged(state)
    assert cleared.pending is None and stage.pending_emits(cleared, GROUP) == []


def test_ticks_fire_time_triggers_on_the_injected_clock() -> None:
    state = arrive(None, arriving("r1", facts=2), T0).state
    assert stage.tick(state, GROUP, STEP, T0 + timedelta(seconds=59)) is state
    ticked = stage.tick(state, GROUP, STEP, T0 + timedelta(seconds=60))
    assert ticked.pending is not None and ticked.pending.batch.run_ids == ["r1"]
    assert len(ticked.pending.batch.candidates) == 2
    assert stage.tick(ticked, GROUP, STEP, T0 + timedelta(hours=1)) is ticked  # still pending


def test_a_batch_of_several_runs_splits_its_candidates_by_run() -> None:
    state = arrive(None, arriving("r1", "r2"), T0).state
    assert [(i.run_id, [c.content for c in i.candidates]) for i in state.items] == [
        ("r1", ["r1 fact 0"]), ("r2", ["r2 fact 0"]),
    ]  # fmt: skip


def test_only_batch_buffers_are_the_buffer_services() -> None:
    assert isinstance(STEP, BufferStep)
    with pytest.raises(TypeError, match="not a batch buffer"):
        stage.batch_buffer(GROUP, "extract")


def test_without_runs_drops_only_those_runs_items() -> None:
    state = arrive(arrive(None, arriving("r1"), T0).state, arriving("r2"), T0).state
    assert stage.without_runs(state, {"other"}) is state
    kept = stage.without_runs(state, {"r1"})
    assert [i.run_id for i in kept.items] == ["r2"] and "r1 fact 0" not in kept.model_dump_json()
