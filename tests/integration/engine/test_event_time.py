"""Event time through the embedded pipeline: dated inputs, dated memories, and a dated
backfill that batches exactly as living through the same days did (ManualClock)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mnemo.clock import ManualClock
from mnemo.core.engine import Engine
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import Memory
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.store import runs
from tests.integration.conftest import engine_settings, scripted_client, system_prompt, user_payload
from tests.integration.engine.helpers import add, add_and_wait, listing
from tests.integration.engine.test_buffers import Harness
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

DAY1 = datetime(2026, 2, 2, tzinfo=UTC)
# (offset from DAY1, what the user said). Sessions (idle 1 h): the first two, the third,
# the two of day 2, the one of day 4. Days: three, two, one.
HISTORY = (
    (timedelta(hours=9), "I started planning the garden"),
    (timedelta(hours=9, minutes=20), "I ordered tomato seeds"),
    (timedelta(hours=15), "I fixed the fence"),
    (timedelta(days=1, hours=10), "I planted the tomatoes"),
    (timedelta(days=1, hours=10, minutes=40), "I watered the beds"),
    (timedelta(days=3, hours=8), "I saw the first sprouts"),
)
TICK = timedelta(minutes=10)


def _group(buffer: dict[str, Any], output: str) -> dict[str, Any]:
    """extract -> commit each activity -> buffer -> one summary per batch -> commit."""
    return {
        "topics": [
            {"name": "Activity", "description": "What the user did.",
             "scoping": {"user_scoped": True}},
            {"name": output, "description": "A summary of activities.",
             "scoping": {"user_scoped": True}},
        ],
        "pipeline": {"steps": [
            {"id": "extract", "kind": "extract", "input_type": "conversation",
             "next": "keep"},
            {"id": "keep", "kind": "commit", "next": "hold"},
            {"id": "hold", "kind": "buffer", "triggers": buffer, "next": "summarize"},
            {"id": "summarize", "kind": "transform", "instructions": "Summarize with the date.",
             "output_topics": [output], "next": "commit"},
            {"id": "commit", "kind": "commit"},
        ]},
    }  # fmt: skip


GROUPS = {
    "sessions": _group({"idle_seconds": 3600}, "Session"),
    "days": _group({"every_seconds": 86400}, "Day"),
}


def _extract_as(topic: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Each user line is one memory of `topic`, resting on that line."""

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        lines = user_payload(request)["input"]
        return {
            "memories": [
                {"topic": topic, "content": line.removeprefix("user: "), "evidence": [i]}
                for i, line in enumerate(lines)
                if not line.startswith("assistant: ")
            ]
        }

    return answer


def _summarize(request: dict[str, Any]) -> dict[str, Any]:
    """One summary, headed by the event times the items carry (and '?' for none)."""
    items = user_payload(request)["memories"]
    times = [i.get("event_time", "?") for i in items]
    topic = "Session" if "- Session" in system_prompt(request) else "Day"
    text = f"[{times[0]}..{times[-1]}] " + " | ".join(i["content"] for i in items)
    return {"memories": [{"topic": topic, "content": text}]}


@pytest.fixture
async def harness(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Harness]:
    clock = ManualClock(DAY1 + timedelta(hours=8))
    settings = engine_settings(postgres.new_database(), tmp_path_factory.mktemp("event-time"))
    engine = await start_engine(
        settings, llm=scripted_client(llm), embedder=HashEmbedder(), clock=clock, run_workers=False
    )
    llm.script("extract", _extract_as("Activity"))
    llm.script("transform", _summarize)
    yield Harness(engine, clock)
    await engine.close()


async def _message(
    harness: Harness, project: str, group: str, text: str, at: datetime | None
) -> None:
    message: dict[str, Any] = {"role": "user", "content": text}
    if at is not None:
        message["created_at"] = at.isoformat()
    body = {"group": group, "user_id": "u", "input": {"conversation": {"messages": [message]}}}
    await add(harness.engine, project, body)


async def _live_until(harness: Harness, until: datetime) -> None:
    """Let the clock run to `until`, with the ticker checking every TICK."""
    while harness.clock.now() + TICK <= until:
        harness.clock.advance(TICK.total_seconds())
        await harness.tick()
    harness.clock.advance((until - harness.clock.now()).total_seconds())
    await harness.tick()


async def _outcome(engine: Engine, project: str, group: str) -> list[tuple[Any, ...]]:
    memories: list[Memory] = await listing(engine, project, group=group, user_id="u", limit=100)
    return sorted((m.topic, m.content, m.event_time, m.event_time_end) for m in memories)


async def _setup(harness: Harness, project: str) -> None:
    for name, group in GROUPS.items():
        await harness.engine.put_group(project, name, group)


async def test_a_dated_backfill_equals_living_through_it(harness: Harness) -> None:
    live, backfill = "p-live", "p-backfill"
    await _setup(harness, live)
    await _setup(harness, backfill)
    # Live: each message is said at its time (no created_at: "now"), the ticker running.
    for offset, text in HISTORY:
        await _live_until(harness, DAY1 + offset)
        for group in GROUPS:
            await _message(harness, live, group, text, None)
        await harness.drain()
    await _live_until(harness, DAY1 + timedelta(days=5))
    # Backfill, weeks later: the same dated messages in one burst, no tick in between.
    harness.clock.advance(timedelta(days=30).total_seconds())
    imported_at = harness.clock.now()
    for offset, text in HISTORY:
        for group in GROUPS:
            await _message(harness, backfill, group, text, DAY1 + offset)
    await harness.drain()
    await _live_until(harness, imported_at + timedelta(days=2))  # the wall clock flushes the rest

    for group in GROUPS:
        assert await _outcome(harness.engine, backfill, group) == await _outcome(
            harness.engine, live, group
        ), group
    sessions = [
        c for t, c, *_ in await _outcome(harness.engine, backfill, "sessions") if t == "Session"
    ]
    assert sorted(sessions) == sorted([
        "[2026-02-02T09:00Z..2026-02-02T09:20Z] I started planning the garden | I ordered tomato seeds",
        "[2026-02-02T15:00Z..2026-02-02T15:00Z] I fixed the fence",
        "[2026-02-03T10:00Z..2026-02-03T10:40Z] I planted the tomatoes | I watered the beds",
        "[2026-02-05T08:00Z..2026-02-05T08:00Z] I saw the first sprouts",
    ])  # fmt: skip
    days = [
        (c, s, e) for t, c, s, e in await _outcome(harness.engine, backfill, "days") if t == "Day"
    ]
    assert sorted((c.split("] ")[1], s, e) for c, s, e in days) == sorted([
        ("I started planning the garden | I ordered tomato seeds | I fixed the fence",
         DAY1 + HISTORY[0][0], DAY1 + HISTORY[2][0]),
        ("I planted the tomatoes | I watered the beds", DAY1 + HISTORY[3][0], DAY1 + HISTORY[4][0]),
        ("I saw the first sprouts", DAY1 + HISTORY[5][0], DAY1 + HISTORY[5][0]),
    ])  # fmt: skip
    # System times stay system times: the backfill was written weeks later.
    for memory in await listing(harness.engine, backfill, group="days", user_id="u", limit=100):
        assert memory.created_at >= imported_at > (memory.event_time or imported_at)


async def test_a_conversation_dates_each_memory_by_its_own_message(
    engine: Engine, project: str, llm: ScriptedLLMServer
) -> None:
    llm.script("extract", _extract_as("UserKnowledge"))
    llm.script("transform_with_context", {"existing": [], "new": []})
    messages = [
        {
            "role": "user",
            "content": "I went hiking yesterday",
            "created_at": "2025-03-10T14:00:00Z",
        },
        {"role": "assistant", "content": "Nice!"},  # inherits the conversation's time
        {"role": "user", "content": "I adopted a cat", "created_at": "2025-03-11T09:30:00+01:00"},
    ]
    conversation = {"messages": messages, "created_at": "2025-03-10T13:00:00Z"}
    run = await add_and_wait(
        engine, project, {"user_id": "u", "input": {"conversation": conversation}}
    )
    assert run.status.value == "completed", run.error
    [call] = llm.calls_for("extract")
    assert user_payload(call)["input_times"] == [
        "2025-03-10T14:00Z", "2025-03-10T13:00Z", "2025-03-11T08:30Z",
    ]  # fmt: skip
    assert "written up to 2025-03-11T08:30Z" in system_prompt(call)
    found = {m.content: m for m in await listing(engine, project, user_id="u")}
    hiking, cat = found["I went hiking yesterday"], found["I adopted a cat"]
    assert hiking.event_time == hiking.event_time_end == datetime(2025, 3, 10, 14, tzinfo=UTC)
    assert cat.event_time == datetime(2025, 3, 11, 8, 30, tzinfo=UTC)
    assert cat.created_at > datetime(2026, 1, 1, tzinfo=UTC)  # a system time


async def test_an_undated_input_happened_when_it_was_added_and_keeps_that_date(
    engine: Engine, project: str, llm: ScriptedLLMServer
) -> None:
    """Engram: created_at "defaults to now". The run keeps its input dated, so a retry
    extracts with the same times."""
    llm.script("extract", lambda r: {"memories": [{"topic": "UserKnowledge", "content": "x y z"}]})
    llm.script("transform_with_context", {"existing": [], "new": []})
    run = await add_and_wait(
        engine, project, {"user_id": "u", "input": {"string": {"content": ["x"]}}}
    )
    [memory] = await listing(engine, project, user_id="u")
    assert memory.event_time == memory.event_time_end == run.created_at
    async with engine.database.db.connect() as conn:
        row = await runs.raw(conn, run.run_id)
    assert row is not None
    kept = AddInput.model_validate(row["raw_input"])
    assert kept.string is not None and kept.string.created_at == run.created_at


async def test_a_memory_without_cited_evidence_spans_its_whole_input(
    engine: Engine, project: str, llm: ScriptedLLMServer
) -> None:
    llm.script("extract", {"memories": [{"topic": "UserKnowledge", "content": "A long week."}]})
    llm.script("transform_with_context", {"existing": [], "new": []})
    messages = [
        {"role": "user", "content": "Monday was rough", "created_at": "2025-03-10T08:00:00Z"},
        {"role": "user", "content": "Friday was better", "created_at": "2025-03-14T18:00:00Z"},
    ]
    await add_and_wait(
        engine, project, {"user_id": "u", "input": {"conversation": {"messages": messages}}}
    )
    [memory] = await listing(engine, project, user_id="u")
    assert (memory.event_time, memory.event_time_end) == (
        datetime(2025, 3, 10, 8, tzinfo=UTC), datetime(2025, 3, 14, 18, tzinfo=UTC),
    )  # fmt: skip
