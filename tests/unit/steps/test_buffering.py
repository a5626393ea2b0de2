"""The buffering rules both transports apply: trigger items, the flushed batch, windows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mnemo.domain.event_time import Span
from mnemo.domain.memory import Candidate
from mnemo.steps.buffering import Held, WindowEntry, flush_batch, items_of, slide

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def candidate(run_id: str, content: str, topic: str = "Note") -> Candidate:
    return Candidate(content=content, topic=topic, run_id=run_id, user_id="u")


def test_trigger_items_count_candidates_and_runs_that_extracted_nothing() -> None:
    held = [
        Held("r1", T0, candidates=(candidate("r1", "a"), candidate("r1", "b", "Other"))),
        Held("r2", T0 + timedelta(seconds=5)),
    ]
    items = items_of(held)
    assert [(i.event_time, i.arrived_at, i.topic) for i in items] == [
        (T0, T0, "Note"), (T0, T0, "Other"),
        (T0 + timedelta(seconds=5), T0 + timedelta(seconds=5), None),
    ]  # fmt: skip


def test_trigger_items_follow_the_event_time_of_their_evidence() -> None:
    """A candidate counts at the end of its evidence, else at its run's input time; a run
    without candidates at its input time; arrival times stay system times."""
    then = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
    dated = candidate("r1", "a").model_copy(
        update={"event_time": then, "event_time_end": then + timedelta(hours=1)}
    )
    held = [
        Held("r1", T0, candidates=(dated, candidate("r1", "b")), event_time=then),
        Held("r2", T0, event_time=then + timedelta(days=1)),
    ]
    assert [(i.event_time, i.arrived_at) for i in items_of(held)] == [
        (then + timedelta(hours=1), T0), (then, T0), (then + timedelta(days=1), T0),
    ]  # fmt: skip
    batch = flush_batch("f", "p", "g", "s", held)
    assert batch.event_time == then + timedelta(days=1)
    assert batch.candidates[0].span == Span(then, then + timedelta(hours=1))


def test_the_flushed_batch_holds_every_candidate_in_order_and_each_run_once() -> None:
    held = [
        Held("r1", T0, "u", {"c": "1"}, (candidate("r1", "a"),)),
        Held("r2", T0, "u", {"c": "1"}, ()),
        Held("r1", T0, "u", {"c": "1"}, (candidate("r1", "b"),)),
        Held("r3", T0, "v", {"c": "2"}, (candidate("r3", "c"),)),
    ]
    batch = flush_batch("f1", "p", "g", "scope", held)
    assert batch.run_ids == ["r1", "r2", "r3"]
    assert [c.content for c in batch.candidates] == ["a", "b", "c"]
    assert (batch.user_id, batch.properties) == ("u", {"c": "1"})  # the first run's scope
    assert (batch.batch_id, batch.scope_key, batch.run_id) == ("f1", "scope", "r3")


def test_a_window_keeps_the_last_inputs_and_gives_the_earlier_ones_as_context() -> None:
    window: list[WindowEntry] = []
    contexts = []
    for i in range(4):
        window, context = slide(window, f"r{i}", [f"u{i}"], 2)
        contexts.append(context)
    assert contexts == [[], ["u0"], ["u0", "u1"], ["u1", "u2"]]
    assert [e.run_id for e in window] == ["r2", "r3"]


def test_a_redelivered_input_replaces_its_own_entry() -> None:
    window, _ = slide([], "r0", ["a"], 3)
    window, _ = slide(window, "r1", ["b"], 3)
    again, context = slide(window, "r1", ["b"], 3)
    assert context == ["a"]
    assert [e.run_id for e in again] == ["r0", "r1"]
