"""Event times of inputs: dating at admission, unit times, the input's time, spans."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from mnemo.domain.event_time import Span, as_utc, dated, input_time, unit_times
from mnemo.domain.inputs import AddInput

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
THEN = datetime(2025, 3, 10, 14, 0, tzinfo=UTC)


def conversation(*messages: dict[str, object], **fields: object) -> AddInput:
    return AddInput.model_validate({"conversation": {"messages": list(messages), **fields}})


def test_a_message_uses_its_own_time_else_its_conversations_else_the_default() -> None:
    raw = conversation(
        {"role": "user", "content": "a", "created_at": "2025-03-10T15:00:00+01:00"},
        {"role": "assistant", "content": "b"},
        created_at="2025-03-09T00:00:00Z",
    )
    assert unit_times(raw, NOW) == [THEN, datetime(2025, 3, 9, tzinfo=UTC)]
    assert input_time(raw, NOW) == THEN
    undated = conversation({"role": "user", "content": "a"})
    assert unit_times(undated, NOW) == [NOW]


def test_strings_and_facts_share_their_containers_time() -> None:
    text = AddInput.model_validate({"string": {"content": ["a", "b"], "created_at": THEN}})
    assert unit_times(text, NOW) == [THEN, THEN]
    facts = AddInput.model_validate(
        {"pre_extracted": {"items": [{"topic": "t", "content": "c"}], "created_at": THEN}}
    )
    assert unit_times(facts, NOW) == [THEN]


def test_naive_times_are_utc_and_offsets_are_normalized() -> None:
    assert as_utc(datetime(2025, 3, 10, 14)) == THEN
    assert as_utc(datetime(2025, 3, 10, 16, tzinfo=timezone(timedelta(hours=2)))) == THEN


def test_dating_fills_only_what_carries_no_time() -> None:
    for raw in (
        AddInput.model_validate({"string": {"content": ["a"]}}),
        conversation({"role": "user", "content": "a"}),
        AddInput.model_validate({"pre_extracted": {"items": [{"topic": "t", "content": "c"}]}}),
    ):
        filled = dated(raw, NOW)
        assert input_time(filled, THEN) == NOW  # the default no longer matters
        assert dated(filled, THEN) == filled  # dating twice changes nothing
    own = conversation({"role": "user", "content": "a"}, created_at=THEN)
    assert dated(own, NOW) == own


def test_spans() -> None:
    later = THEN + timedelta(hours=1)
    assert Span.of([None]) is None
    assert Span.of([later, None, THEN]) == Span(THEN, later)
    assert Span.join([None, Span(later, later), Span(THEN, THEN)]) == Span(THEN, later)
    assert Span(THEN, THEN).union(None) == Span(THEN, THEN)
    assert Span(later, later).union(Span(THEN, THEN)) == Span(THEN, later)
