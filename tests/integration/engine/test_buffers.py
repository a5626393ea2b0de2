"""Buffers with a controllable clock: time triggers, sliding windows, and restarts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from mnemo.clock import ManualClock
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from tests.integration.conftest import engine_settings, scripted_client, user_payload
from tests.integration.engine.helpers import Harness, add, listing, says
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

TOPICS = [
    {"name": "Note", "description": "Anything the user notes.", "scoping": {"user_scoped": True}},
    {"name": "Digest", "description": "A digest of notes.", "scoping": {"user_scoped": True}},
]


def buffered_group(buffer: dict[str, Any]) -> dict[str, Any]:
    return {
        "topics": TOPICS,
        "pipeline": {
            "steps": [
                {"id": "extract", "kind": "extract", "input_type": "string", "next": "hold"},
                {"id": "hold", "kind": "buffer", "next": "digest", **buffer},
                {
                    "id": "digest",
                    "kind": "transform",
                    "instructions": "Digest the notes.",
                    "output_topics": ["Digest"],
                    "next": "commit",
                },
                {"id": "commit", "kind": "commit"},
            ]
        },
    }


@pytest.fixture
async def harness(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Harness]:
    clock = ManualClock(datetime(2026, 3, 1, 23, 0, tzinfo=UTC))
    settings = engine_settings(postgres.new_database(), tmp_path_factory.mktemp("manual"))
    engine = await start_engine(
        settings, llm=scripted_client(llm), embedder=HashEmbedder(), clock=clock, run_workers=False
    )
    llm.script(
        "extract",
        lambda r: {
            "memories": [{"topic": "Note", "content": line} for line in user_payload(r)["input"]]
        },
    )
    llm.script(
        "transform",
        lambda r: {
            "memories": [
                {
                    "topic": "Digest",
                    "content": " | ".join(m["content"] for m in user_payload(r)["memories"]),
                }
            ]
        },
    )
    yield Harness(engine, clock)
    await engine.close()


@pytest.mark.parametrize(
    "triggers, wait_seconds, too_early",
    [
        ({"idle_seconds": 60}, 61, 59),
        ({"since_first_seconds": 300}, 301, 290),
        ({"every_seconds": 86400}, 3601, 3000),  # the clock starts at 23:00 UTC
    ],
)
async def test_time_triggers(
    harness: Harness, project: str, triggers: dict[str, Any], wait_seconds: float, too_early: float
) -> None:
    await harness.engine.put_group(project, "notes", buffered_group({"triggers": triggers}))
    runs = [
        await add(harness.engine, project, {"group": "notes", "user_id": "u", "input": says(t)})
        for t in ("tea", "chess")
    ]
    await harness.drain()
    assert [await harness.status(project, r.run_id) for r in runs] == ["in_buffer"] * 2
    harness.clock.advance(too_early)
    assert await harness.tick() == 0
    harness.clock.advance(wait_seconds - too_early)
    assert await harness.tick() == 1
    assert [await harness.status(project, r.run_id) for r in runs] == ["completed"] * 2
    digest = await listing(harness.engine, project, group="notes", user_id="u", topics=["Digest"])
    assert [m.content for m in digest] == ["tea | chess"]


async def test_count_trigger_flushes_on_the_nth_item(harness: Harness, project: str) -> None:
    await harness.engine.put_group(project, "notes", buffered_group({"triggers": {"count": 3}}))
    for text in ("a1", "a2", "a3", "a4"):
        await add(harness.engine, project, {"group": "notes", "user_id": "u", "input": says(text)})
    await harness.drain()
    digest = await listing(harness.engine, project, group="notes", user_id="u", topics=["Digest"])
    assert [m.content for m in digest] == ["a1 | a2 | a3"]


async def test_buffers_are_per_scope(harness: Harness, project: str) -> None:
    await harness.engine.put_group(project, "notes", buffered_group({"triggers": {"count": 2}}))
    for user, text in (("u1", "x"), ("u2", "y"), ("u1", "z")):
        await add(harness.engine, project, {"group": "notes", "user_id": user, "input": says(text)})
    await harness.drain()
    assert [
        m.content
        for m in await listing(
            harness.engine, project, group="notes", user_id="u1", topics=["Digest"]
        )
    ] == ["x | z"]
    assert (
        await listing(harness.engine, project, group="notes", user_id="u2", topics=["Digest"]) == []
    )


async def test_buffer_survives_an_engine_restart(
    harness: Harness, project: str, llm: ScriptedLLMServer
) -> None:
    await harness.engine.put_group(project, "notes", buffered_group({"triggers": {"count": 2}}))
    first = await add(
        harness.engine, project, {"group": "notes", "user_id": "u", "input": says("one")}
    )
    await harness.drain()
    settings = harness.engine.settings
    await harness.engine.close()
    restarted = await start_engine(
        settings,
        llm=scripted_client(llm),
        embedder=HashEmbedder(),
        clock=harness.clock,
        run_workers=False,
    )
    harness.bind(restarted)
    await add(restarted, project, {"group": "notes", "user_id": "u", "input": says("two")})
    await harness.drain()
    assert await harness.status(project, first.run_id) == "completed"
    assert [
        m.content
        for m in await listing(restarted, project, group="notes", user_id="u", topics=["Digest"])
    ] == ["one | two"]


async def test_daily_rollup_commits_through_the_day_then_rolls_up(
    harness: Harness, project: str, llm: ScriptedLLMServer
) -> None:
    await harness.engine.put_group(project, "days", {"template": "daily_rollup"})
    llm.script(
        "extract",
        lambda r: {
            "memories": [
                {"topic": "Activity", "content": line} for line in user_payload(r)["input"]
            ]
        },
    )
    llm.script(
        "transform",
        lambda r: {
            "memories": [
                {
                    "topic": "DailyActivity",
                    "content": "Day: "
                    + ", ".join(m["content"] for m in user_payload(r)["memories"]),
                }
            ]
        },
    )
    runs = [
        await add(harness.engine, project, {"group": "days", "user_id": "u", "input": says(t)})
        for t in ("wrote the report", "fixed the bike")
    ]
    await harness.drain()
    assert [await harness.status(project, r.run_id) for r in runs] == ["completed"] * 2
    activities = await listing(
        harness.engine, project, group="days", user_id="u", topics=["Activity"]
    )
    assert sorted(m.content for m in activities) == ["fixed the bike", "wrote the report"]
    assert await harness.tick() == 0
    harness.clock.advance(3601)  # past midnight UTC
    assert await harness.tick() == 1
    daily = await listing(
        harness.engine, project, group="days", user_id="u", topics=["DailyActivity"]
    )
    assert [m.content for m in daily] == ["Day: wrote the report, fixed the bike"]
