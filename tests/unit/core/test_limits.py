"""Admission limits as located errors (pure: no database)."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.core.admission import check_group
from mnemo.core.limits import add_errors, group_errors, query_errors
from mnemo.domain.group import GroupConfig
from mnemo.domain.inputs import AddInput
from mnemo.domain.limits import InputLimits
from mnemo.domain.requests import InvalidRequest
from mnemo.domain.search import TopicSelector

LIMITS = InputLimits(memory_chars=10, add_chars=30, add_units=3, properties=2, topic_selectors=2)


def _items(*contents: str) -> AddInput:
    items = [{"topic": "T", "content": c} for c in contents]
    return AddInput.model_validate({"pre_extracted": {"items": items}})


def _locations(errors: list) -> list[str]:
    return [e.location for e in errors]


def test_within_limits() -> None:
    assert add_errors(_items("short", "fine"), {"a": "1"}, LIMITS) == []


def test_each_item_and_the_add() -> None:
    errors = add_errors(_items("x" * 11, " \t", "ok", "ok"), {"a": "1", "b": "2", "c": "3"}, LIMITS)
    assert _locations(errors) == [
        "body.input.pre_extracted.items[0].content",
        "body.input.pre_extracted.items[1].content",
        "body.input.pre_extracted.items",
        "body.properties",
    ]
    assert "at most 10 characters (got 11)" in errors[0].message


def test_conversation_and_string_units() -> None:
    chat = AddInput.model_validate(
        {"conversation": {"messages": [{"role": "user", "content": "x" * 31}]}}
    )
    assert _locations(add_errors(chat, None, LIMITS)) == ["body.input.conversation.messages"]
    strings = AddInput.model_validate({"string": {"content": ["a", "b", "c", "d"]}})
    assert _locations(add_errors(strings, None, LIMITS)) == ["body.input.string.content"]


def test_queries() -> None:
    assert _locations(query_errors(["A", "B", "C"], None, LIMITS)) == ["body.topics"]
    selector = TopicSelector(name="A", properties={"a": "1", "b": None, "c": "3"})
    assert _locations(query_errors([selector], {"x": "1"}, LIMITS)) == ["body.topics[0].properties"]
    assert query_errors(None, {"x": "1"}, LIMITS) == []


def _group(steps: list[dict[str, Any]], topics: int = 1) -> GroupConfig:
    return GroupConfig.model_validate(
        {
            "name": "g",
            "topics": [{"name": f"T{i}", "description": "d"} for i in range(topics)],
            "pipeline": {"steps": steps},
        }
    )


def test_group_limits() -> None:
    limits = InputLimits(topics_per_group=1, pipeline_steps=1, instructions_chars=5)
    group = _group(
        [
            {
                "id": "e",
                "kind": "extract",
                "input_type": "string",
                "instructions": "x" * 6,
                "next": "c",
            },
            {"id": "c", "kind": "commit"},
        ],
        topics=2,
    )
    assert _locations(group_errors(group, limits)) == [
        "body.topics",
        "body.pipeline.steps",
        "body.pipeline.steps[0].instructions",
    ]


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "in", "kind": "commit", "input_type": "string"},
        {"id": "in", "kind": "transform", "input_type": "conversation", "instructions": "x"},
        {"id": "in", "kind": "buffer", "mode": "sliding_window", "input_type": "string"},
    ],
)
def test_entries_that_cannot_take_raw_input(entry: dict[str, Any]) -> None:
    steps = [entry] if entry["kind"] == "commit" else [{**entry, "next": "c"}]
    steps += [] if entry["kind"] == "commit" else [{"id": "c", "kind": "commit"}]
    with pytest.raises(InvalidRequest) as refused:
        check_group(_group(steps), InputLimits())
    assert refused.value.kind == "unprocessable"
    assert _locations(refused.value.errors) == ["body.pipeline.steps[0]"]


@pytest.mark.parametrize(
    "steps",
    [
        [{"id": "in", "kind": "commit", "input_type": "pre_extracted"}],
        [
            {
                "id": "w",
                "kind": "buffer",
                "mode": "sliding_window",
                "input_type": "string",
                "next": "e",
            },
            {"id": "e", "kind": "extract", "input_type": "conversation", "next": "c"},
            {"id": "c", "kind": "commit"},
        ],
    ],
)
def test_entries_that_can(steps: list[dict[str, Any]]) -> None:
    check_group(_group(steps), InputLimits())
