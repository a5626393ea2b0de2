"""Ordering, failure handling and retries of the durable pipeline."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from mnemo.core.engine import Engine
from mnemo.domain.requests import AddRequest, InvalidRequest
from mnemo.store.schema import bus_records, runs
from tests.integration.conftest import echo_extract
from tests.integration.engine.helpers import add, add_and_wait, listing, says
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


async def test_runs_of_one_scope_commit_in_add_order(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", {"existing": [], "new": []})
    llm.delay_seconds = 0.02
    users = [f"user-{k}" for k in range(6)]
    added = []
    for i in range(8):
        for user in users:
            added.append(
                await add(engine, project, {"user_id": user, "input": says(f"{user} step {i:02d}")})
            )
    done = await asyncio.gather(*(engine.wait_run(project, r.run_id, 60) for r in added))
    assert {r.status for r in done} == {"completed"}
    for user in users:
        memories = await listing(engine, project, user_id=user, limit=100)
        by_commit = sorted(memories, key=lambda m: m.created_at)
        assert [m.content for m in by_commit] == [f"{user} step {i:02d}" for i in range(8)]


async def test_llm_failure_fails_the_run_and_retry_completes(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    llm.fail("extract", status=503, times=10)
    failed = await add_and_wait(engine, project, {"user_id": "u1", "input": says("I like tea")})
    assert failed.status == "failed"
    assert failed.error is not None and "extract" in failed.error and "503" in failed.error
    assert len(llm.calls_for("extract")) == 3  # bounded retries
    assert await listing(engine, project, user_id="u1") == []

    llm.reset()
    llm.script("extract", echo_extract)
    retried = await engine.retry_run(project, failed.run_id)
    assert retried.status == "running"
    done = await engine.wait_run(project, failed.run_id, 20)
    assert done.status == "completed" and done.error is None
    assert [m.content for m in await listing(engine, project, user_id="u1")] == ["I like tea"]


async def test_transient_errors_are_retried_within_the_run(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    llm.script("extract", echo_extract)
    llm.fail("extract", status=429, times=1)
    llm.invalid_json("extract", times=1)
    done = await add_and_wait(engine, project, {"user_id": "u1", "input": says("I like green tea")})
    assert done.status == "completed"
    assert len(llm.calls_for("extract")) == 3


async def test_bad_input_is_refused_and_nothing_is_stored(engine: Engine, project: str) -> None:
    await engine.put_group(project, "chat", {"template": "personalization"})

    async def counts() -> tuple[int, int]:
        async with engine.database.db.connect() as conn:
            return (
                (await conn.execute(select(func.count()).select_from(runs))).scalar_one(),
                (await conn.execute(select(func.count()).select_from(bus_records))).scalar_one(),
            )

    before = await counts()
    with pytest.raises(InvalidRequest) as missing:
        await engine.add(
            project,
            AddRequest.model_validate(
                {"group": "chat", "user_id": "u1", "input": says("hello there friend")}
            ),
        )
    assert [e.location for e in missing.value.errors] == ["body.properties.conversation_id"]
    with pytest.raises(InvalidRequest) as no_user:
        await engine.add(project, AddRequest.model_validate({"input": says("hello there")}))
    assert [e.location for e in no_user.value.errors] == ["body.user_id"]
    with pytest.raises(InvalidRequest) as bad_topic:
        await engine.add(
            project,
            AddRequest.model_validate(
                {
                    "user_id": "u1",
                    "input": {"pre_extracted": {"items": [{"topic": "Nope", "content": "x"}]}},
                }
            ),
        )
    assert bad_topic.value.errors[0].location == "body.input.pre_extracted.items[0].topic"
    with pytest.raises(InvalidRequest) as bad_root:
        await engine.add(
            project,
            AddRequest.model_validate({"user_id": "u1", "root": "nowhere", "input": says("x y z")}),
        )
    assert bad_root.value.errors[0].location == "body.root"
    assert await counts() == before


async def test_root_starts_the_pipeline_at_the_named_step(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    llm.script("extract", echo_extract)
    run = await add_and_wait(
        engine,
        project,
        {
            "user_id": "u1",
            "root": "commit",
            "input": {
                "pre_extracted": {"items": [{"topic": "UserKnowledge", "content": "Direct."}]}
            },
        },
    )
    assert run.starting_step == 4 and run.status == "completed"
    assert llm.calls == []
    assert [m.content for m in await listing(engine, project, user_id="u1")] == ["Direct."]
    with pytest.raises(InvalidRequest) as refused:
        await add(engine, project, {"user_id": "u1", "root": "reconcile", "input": says("x y z")})
    assert refused.value.errors[0].location == "body.root"
