"""Raw-input retention per group: keep N days, or drop at commit; the embedded sweep."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from mnemo.clock import ManualClock
from mnemo.core.retention import sweep_expired
from mnemo.domain.memory import RunState
from mnemo.domain.requests import InvalidRequest
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.store import runs
from tests.integration.conftest import engine_settings, scripted_client, user_payload
from tests.integration.engine.helpers import Harness, add, listing, says
from tests.support import scan
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

TOPICS = [{"name": "Note", "description": "Notes.", "scoping": {"user_scoped": True}}]
PLAIN = {"steps": [
    {"id": "extract", "kind": "extract", "input_type": "string", "next": "commit"},
    {"id": "commit", "kind": "commit"},
]}  # fmt: skip
WINDOWED = {"steps": [
    {"id": "window", "kind": "buffer", "mode": "sliding_window", "window": 3,
     "input_type": "string", "next": "extract"},
    {"id": "extract", "kind": "extract", "input_type": "conversation", "next": "commit"},
    {"id": "commit", "kind": "commit"},
]}  # fmt: skip


def group(pipeline: dict[str, Any], retention: dict[str, Any]) -> dict[str, Any]:
    return {"topics": TOPICS, "pipeline": pipeline, "retention": retention}


def token() -> str:
    return f"zqr{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def harness(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Harness]:
    clock = ManualClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    settings = engine_settings(postgres.new_database(), tmp_path_factory.mktemp("retention"))
    engine = await start_engine(
        settings, llm=scripted_client(llm), embedder=HashEmbedder(), clock=clock, run_workers=False
    )
    llm.script(
        "extract",
        lambda r: {"memories": [{"topic": "Note", "content": u} for u in user_payload(r)["input"]]},
    )
    yield Harness(engine, clock)
    await engine.close()


async def note(h: Harness, project: str, group: str, text: str) -> str:
    body = {"group": group, "user_id": "u", "input": says(text)}
    return (await add(h.engine, project, body)).run_id


async def raw_input(h: Harness, run_id: str) -> dict[str, Any]:
    async with h.engine.db.connect() as conn:
        row = await runs.raw(conn, run_id)
    assert row is not None
    return dict(row["raw_input"])


async def test_raw_input_is_redacted_after_the_groups_days(
    harness: Harness, project: str, llm: ScriptedLLMServer
) -> None:
    h = harness
    await h.engine.put_group(project, "notes", group(PLAIN, {"raw_input_days": 1}))
    await h.engine.put_group(project, "keep", group(PLAIN, {}))
    kept_text, done_text, failed_text, queued_text = token(), token(), token(), token()
    kept = await note(h, project, "keep", kept_text)
    done = await note(h, project, "notes", done_text)
    await h.drain()
    llm.fail("extract", status=500, times=3)  # the scripted client's attempts: the run fails
    failed = await note(h, project, "notes", failed_text)
    await h.drain()
    assert await h.status(project, failed) == "failed"
    h.clock.advance(0.9 * 86400)
    assert await sweep_expired(h.engine.db, h.clock) == 0
    queued = await note(h, project, "notes", queued_text)  # running: its input is still needed
    h.clock.advance(0.2 * 86400)
    assert await sweep_expired(h.engine.db, h.clock) == 2
    assert await raw_input(h, done) == {} and await raw_input(h, failed) == {}
    assert await raw_input(h, kept) != {} and await raw_input(h, queued) != {}
    # The memory stays (retention is about raw input); the failed run cannot be retried.
    assert ("memories", "content") in {
        (x.table, x.column) for x in await scan.find(h.engine.db, [done_text])
    }
    assert {(x.table, x.column) for x in await scan.find(h.engine.db, [failed_text])} == set()
    with pytest.raises(InvalidRequest, match="retention") as refused:
        await h.engine.retry_run(project, failed)
    assert refused.value.kind == "conflict"
    await h.drain()
    assert await h.status(project, queued) == "completed"


async def test_drop_at_commit_keeps_failed_runs_for_a_retry(
    harness: Harness, project: str, llm: ScriptedLLMServer
) -> None:
    h = harness
    await h.engine.put_group(project, "notes", group(PLAIN, {"drop_raw_input_at_commit": True}))
    done = await note(h, project, "notes", token())
    await h.drain()
    assert await h.status(project, done) == "completed"
    assert await raw_input(h, done) == {}
    llm.fail("extract", status=500, times=3)
    failed = await note(h, project, "notes", token())
    await h.drain()
    assert await raw_input(h, failed) != {}
    retried = await h.engine.retry_run(project, failed)
    assert retried.status == RunState.running
    await h.drain()
    assert await h.status(project, failed) == "completed" and await raw_input(h, failed) == {}


async def test_sliding_window_items_expire_with_their_raw_input(
    harness: Harness, project: str, llm: ScriptedLLMServer
) -> None:
    h = harness
    await h.engine.put_group(project, "chat", group(WINDOWED, {"raw_input_days": 1}))
    old = [token(), token()]
    for text in old:
        await note(h, project, "chat", text)
    await h.drain()
    assert ("buffer_items", "payload") in {
        (x.table, x.column) for x in await scan.find(h.engine.db, old)
    }
    h.clock.advance(1.5 * 86400)
    await sweep_expired(h.engine.db, h.clock)
    leftovers = {(x.table, x.column) for x in await scan.find(h.engine.db, old)}
    committed = {("memories", "content"), ("memories", "tsv"), ("memory_terms", "lexeme")}
    assert leftovers <= committed, leftovers
    fresh = token()
    await note(h, project, "chat", fresh)
    await h.drain()
    memories = await listing(h.engine, project, group="chat", user_id="u")
    assert fresh in {m.content for m in memories}
    contexts = [
        user_payload(c).get("earlier_context_do_not_extract") for c in llm.calls_for("extract")
    ]
    assert contexts == [None, [old[0]], None]  # the expired inputs are no context any more


@pytest.mark.parametrize(
    "retention, message",
    [
        ({"raw_input_days": 0}, "greater than 0"),
        ({"raw_input_days": -2}, "greater than 0"),
        ({"raw_input_days": 100000}, "less than or equal"),
        ({"keep": 3}, "Extra inputs"),
        ({"drop_raw_input_at_commit": "sometimes"}, "boolean"),
    ],
)
async def test_retention_is_validated_like_the_rest_of_the_group(
    harness: Harness, project: str, retention: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidRequest, match=message):
        await harness.engine.put_group(project, "bad", group(PLAIN, retention))


async def test_a_template_group_takes_a_retention(harness: Harness, project: str) -> None:
    made = await harness.engine.put_group(
        project, "t", {"template": "personalization", "retention": {"raw_input_days": 30}}
    )
    assert made.retention.raw_input_days == 30 and made.template == "personalization"
    assert (await harness.engine.group(project, "t")).retention.raw_input_days == 30
    with pytest.raises(InvalidRequest, match="only description and retention"):
        await harness.engine.put_group(project, "u", {"template": "default", "stray": 1})
    # With topics it is a full configuration naming its template (the console's editor
    # sends one so): it must then be whole.
    with pytest.raises(InvalidRequest, match="pipeline"):
        await harness.engine.put_group(project, "u", {"template": "default", "topics": TOPICS})
