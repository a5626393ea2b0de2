"""The buffer service's state transitions, without a broker: pure functions of the state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mnemo.domain.batch import Batch
from mnemo.domain.memory import Candidate, RunState
from mnemo.domain.pipeline import BufferStep
from mnemo.domain.templates import group_from_document
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.events.status import RunStatusEvent
from mnemo.kafka.stages import buffer as stage

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


def arriving(*run_ids: str, facts: int = 1, happened: datetime | None = None) -> StageEvent:
    """Runs arriving at the buffer; `happened`: their event time (None: live, now)."""
    candidates = [
        Candidate(content=f"{r} fact {i}", topic="Facts", user_id="u", run_id=r,
                  event_time=happened, event_time_end=happened)
        for r in run_ids
        for i in range(facts)
    ]  # fmt: skip
    batch = Batch(batch_id=run_ids[0], project="p", group="kt", scope_key="s", run_ids=list(run_ids),
                  user_id="u", candidates=candidates, event_time=happened)  # fmt: skip
    return StageEvent(step_id="hold", batch=batch, run_started={r: T0 for r in run_ids})


def arrive(state: stage.BufferState | None, event: StageEvent, at: datetime) -> stage.Arrival:
    return stage.arrive(state, event, GROUP, STEP, partition=2, now=at, service="buffer")


def test_a_new_run_is_held_and_reported_in_buffer() -> None:
    arrival = arrive(None, arriving("r1"), T0)
    assert [i.run_id for i in arrival.state.items] == ["r1"]
    assert arrival.state.partition == 2 and arrival.state.pending == []
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
    [pending] = state.pending
    assert pending.step_id == "reconcile"
    assert pending.batch.run_ids == ["r1", "r2", "r3"]
    assert pending.run_started == {"r1": T0, "r2": T0, "r3": T0}
    assert pending.batch.batch_id.startswith("flush-")
    # The flushed runs count as seen: a late redelivery is not buffered again.
    late = arrive(stage.acknowledged(state), arriving("r2"), T0 + timedelta(seconds=3))
    assert late.fresh == [] and late.state.items == []


def test_a_flush_id_depends_only_on_its_runs() -> None:
    def flushed_id() -> str:
        state = None
        for i, run in enumerate(("r1", "r2", "r3")):
            state = arrive(state, arriving(run), T0 + timedelta(seconds=i)).state
        assert state is not None and len(state.pending) == 1
        return state.pending[0].batch.batch_id

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
    assert state.pending == [emit.record]
    cleared = stage.acknowledged(state)
    assert cleared.pending == [] and stage.pending_emits(cleared, GROUP) == []


def test_ticks_fire_time_triggers_on_the_injected_clock() -> None:
    state = arrive(None, arriving("r1", facts=2), T0).state
    assert stage.tick(state, GROUP, STEP, T0 + timedelta(seconds=59)) is state
    ticked = stage.tick(state, GROUP, STEP, T0 + timedelta(seconds=60))
    [pending] = ticked.pending
    assert pending.batch.run_ids == ["r1"] and len(pending.batch.candidates) == 2
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


THEN = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)


def test_a_backfill_batches_by_event_time_not_by_arrival() -> None:
    """Three runs of last year arrive in one second: the first two happened a minute apart,
    the third an hour later, so the third closes the first two's batch (idle 60 s) while
    all three arrived together."""
    state = arrive(None, arriving("r1", happened=THEN), T0).state
    state = arrive(state, arriving("r2", happened=THEN + timedelta(seconds=30)), T0).state
    assert state.pending == [] and state.watermark == THEN + timedelta(seconds=30)
    third = arrive(state, arriving("r3", happened=THEN + timedelta(hours=1)), T0)
    [closed] = third.state.pending
    assert closed.batch.run_ids == ["r1", "r2"] and third.fresh == ["r3"]
    assert closed.batch.event_time == THEN + timedelta(seconds=30)
    assert [i.run_id for i in third.state.items] == ["r3"]
    assert third.state.watermark == THEN + timedelta(hours=1)
    # Nothing newer arrives: the wall clock flushes the last one.
    state = stage.acknowledged(third.state)
    assert stage.tick(state, GROUP, STEP, T0 + timedelta(seconds=59)) is state
    [last] = stage.tick(state, GROUP, STEP, T0 + timedelta(seconds=60)).pending
    assert last.batch.run_ids == ["r3"]


def test_an_arrival_can_close_one_batch_and_fill_the_next() -> None:
    """r1 waits; r2..r4 arrive an hour later in one record: r1 flushes alone first, then the
    three new runs reach the count trigger, in that order."""
    state = arrive(None, arriving("r1", happened=THEN), T0).state
    late = THEN + timedelta(hours=1)
    arrival = arrive(state, arriving("r2", "r3", "r4", happened=late), T0)
    assert [p.batch.run_ids for p in arrival.state.pending] == [["r1"], ["r2", "r3", "r4"]]
    emits = stage.pending_emits(arrival.state, GROUP)
    assert [e.record.batch.run_ids for e in emits] == [["r1"], ["r2", "r3", "r4"]]


def test_a_state_saved_with_one_pending_flush_still_loads() -> None:
    state = arrive(None, arriving("r1", "r2", "r3"), T0).state
    [pending] = state.pending
    old = {**state.model_dump(mode="json"), "pending": pending.model_dump(mode="json")}
    old.pop("watermark")
    assert stage.BufferState.model_validate(old).pending == [pending]
    assert stage.BufferState.model_validate({**old, "pending": None}).pending == []


DAILY = group_from_document("days", {
    "topics": [{"name": "Facts", "description": "Facts.", "scoping": {"user_scoped": True}}],
    "pipeline": {"steps": [
        {"id": "extract", "kind": "extract", "input_type": "string", "next": "day"},
        {"id": "day", "kind": "buffer", "triggers": {"every_seconds": 86400}, "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
})  # fmt: skip


def test_late_and_out_of_order_runs() -> None:
    """Daily: a run of an earlier day than the watermark closes the day being held and is
    rolled up on its own. Idle: a late run in an empty buffer flushes at once."""
    day = stage.batch_buffer(DAILY, "day")

    def at_day(*run_ids: str, happened: datetime) -> StageEvent:
        event = arriving(*run_ids, happened=happened)
        return event.model_copy(update={"step_id": "day"})

    state = stage.arrive(None, at_day("d2", happened=THEN + timedelta(days=1)), DAILY, day, 0,
                         T0, "buffer").state  # fmt: skip
    late = stage.arrive(state, at_day("d1", happened=THEN), DAILY, day, 0, T0, "buffer")
    assert [p.batch.run_ids for p in late.state.pending] == [["d2"], ["d1"]]
    assert late.state.watermark == THEN + timedelta(days=1)  # a late run does not move it back

    state = arrive(None, arriving("r1", happened=THEN + timedelta(hours=2)), T0).state
    state = stage.acknowledged(stage.tick(state, GROUP, STEP, T0 + timedelta(seconds=60)))
    assert state.items == [] and state.watermark == THEN + timedelta(hours=2)
    alone = arrive(state, arriving("r0", happened=THEN), T0 + timedelta(seconds=61))
    assert [p.batch.run_ids for p in alone.state.pending] == [["r0"]]


def test_a_flush_keeps_its_runs_trace_contexts_first_come_first() -> None:
    trace = {f"r{i}": {"traceparent": f"00-{i:032x}-{i:016x}-01"} for i in (1, 2, 3)}
    state = None
    for run_id in ("r1", "r2", "r3"):
        state = stage.arrive(state, arriving(run_id), GROUP, STEP, partition=2, now=T0,
                             service="buffer", trace=trace[run_id]).state  # fmt: skip
    assert state is not None
    [flushed] = state.pending  # the count trigger (3) fired
    assert flushed.traces == [trace["r1"], trace["r2"], trace["r3"]]
    [emit] = stage.delivery(flushed, GROUP)
    assert emit.kind == ChannelKind.drafts and emit.record.batch.run_ids == ["r1", "r2", "r3"]
