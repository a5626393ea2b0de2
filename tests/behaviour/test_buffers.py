"""Every buffer trigger flushes, on both transports: count, since-first, idle, topics, the
epoch-aligned interval (the daily trigger, with a 1 s day) and the sliding window."""

from __future__ import annotations

import pytest

from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import (
    add,
    buffered_group,
    completed,
    contents,
    items,
    reach,
    says,
    script_digest,
)


async def test_count_flushes_exactly_when_the_buffer_is_full(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "notes", buffered_group({"triggers": {"count": 2}}))
    script_digest(mode)
    first = await add(mode, project, "notes", "u", says("a"))
    await reach(mode, project, first.run_id, "in_buffer")
    second = await add(mode, project, "notes", "u", says("b"))
    await completed(mode, project, first.run_id, second.run_id)
    third = await add(mode, project, "notes", "u", says("c"))
    await reach(mode, project, third.run_id, "in_buffer")  # alone: it waits for a fourth
    assert await contents(mode, project, "notes", "u", topics=["Digest"]) == [
        "User said: a | User said: b"
    ]


@pytest.mark.parametrize(
    "triggers",
    [
        {"since_first_seconds": 0.5},
        {"idle_seconds": 0.5},
        {"every_seconds": 1},  # the daily trigger's mechanism (86400: midnight UTC)
    ],
    ids=["since_first", "idle", "daily"],
)
async def test_a_time_trigger_flushes_what_waits(
    mode: Mode, project: str, triggers: dict[str, float]
) -> None:
    await mode.engine.put_group(project, "notes", buffered_group({"triggers": triggers}))
    script_digest(mode)
    run = await add(mode, project, "notes", "u", says("a", "b"))
    await completed(mode, project, run.run_id)
    assert await contents(mode, project, "notes", "u", topics=["Digest"]) == [
        "User said: a | User said: b"
    ]


async def test_a_topic_trigger_flushes_when_its_topic_arrives(mode: Mode, project: str) -> None:
    group = buffered_group({"triggers": {"count": 100, "topics_present": ["Urgent"]}})
    await mode.engine.put_group(project, "notes", group)
    script_digest(mode)
    note = await add(mode, project, "notes", "u", items(("Note", "buy milk")))
    await reach(mode, project, note.run_id, "in_buffer")
    urgent = await add(mode, project, "notes", "u", items(("Urgent", "call mum")))
    await completed(mode, project, note.run_id, urgent.run_id)
    assert await contents(mode, project, "notes", "u", topics=["Digest"]) == ["buy milk | call mum"]


async def test_a_sliding_window_gives_extract_the_last_inputs(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "chat", {
        "topics": [{"name": "Note", "description": "Notes.", "scoping": {"user_scoped": True}}],
        "pipeline": {"steps": [
            {"id": "window", "kind": "buffer", "mode": "sliding_window", "window": 2,
             "input_type": "string", "next": "extract"},
            {"id": "extract", "kind": "extract", "input_type": "conversation", "next": "commit"},
            {"id": "commit", "kind": "commit"},
        ]},
    })  # fmt: skip
    for text in ("m1", "m2", "m3"):
        run = await add(mode, project, "chat", "u", says(text))
        await completed(mode, project, run.run_id)
    import json

    windows = []
    for call in mode.llm.calls_for("extract"):
        user = next(m for m in call["messages"] if m["role"] == "user")
        windows.append(json.loads(user["content"]).get("earlier_context_do_not_extract", []))
    assert windows == [[], ["m1"], ["m1", "m2"]]
