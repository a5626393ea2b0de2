"""The prompts show the model when things happened."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from mnemo.prompts import extract, transform
from mnemo.prompts import transform_with_context as twc

MONDAY = datetime(2025, 3, 10, 14, 0, tzinfo=UTC)
FRIDAY = datetime(2025, 3, 14, 18, 30, tzinfo=UTC)


def test_extract_dates_each_line_and_names_the_inputs_own_now() -> None:
    context = extract.Context(
        topics=[extract.TopicBrief(name="t", description="d")],
        input_type="conversation",
        units=[
            extract.DatedUnit(text="user: I went hiking yesterday", at=MONDAY),
            extract.DatedUnit(text="user: I cooked", at=FRIDAY),
        ],
    )
    system, user = extract.messages(context)
    body = json.loads(user["content"])
    assert body["input"] == ["user: I went hiking yesterday", "user: I cooked"]
    assert body["input_times"] == ["2025-03-10T14:00Z", "2025-03-14T18:30Z"]
    assert "written up to 2025-03-14T18:30Z" in system["content"]
    assert "evidence" in system["content"] and context.reference_time == FRIDAY


def test_transform_and_reconcile_show_event_times() -> None:
    context = transform.Context(
        instructions="i",
        output_topics=[],
        items=[transform.Item(topic="a", content="x", event_time=MONDAY),
               transform.Item(topic="a", content="y")],
    )  # fmt: skip
    items = json.loads(transform.messages(context)[1]["content"])["memories"]
    assert items == [
        {"topic": "a", "content": "x", "event_time": "2025-03-10T14:00Z"},
        {"topic": "a", "content": "y"},
    ]
    reconcile = twc.Context(
        instructions="i",
        existing=[twc.ExistingMemory(id="m", topic="a", content="x", event_time=MONDAY)],
        new=[twc.NewMemory(index=0, topic="a", content="y", event_time=FRIDAY)],
    )
    body = json.loads(twc.messages(reconcile)[1]["content"])
    assert body["existing"][0]["event_time"] == "2025-03-10T14:00Z"
    assert body["new"][0]["event_time"] == "2025-03-14T18:30Z"
