"""Idempotent adds on the embedded transport: a repeat returns the first run and nothing is
processed twice; another request under the same key is refused; keys are per project and
expire after the window (ManualClock)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from mnemo.clock import ManualClock
from mnemo.core.engine import Engine
from mnemo.core.retention import forget_expired_keys
from mnemo.domain.requests import AddRequest, InvalidRequest
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.store.schema import idempotency_keys, runs
from tests.integration.conftest import engine_settings, scripted_client
from tests.integration.engine.helpers import facts, listing
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

GROUP = {
    "topics": [{"name": "Note", "description": "Notes.", "scoping": {"user_scoped": True}}],
    "pipeline": {"steps": [
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip


def _note(content: str, **extra: Any) -> AddRequest:
    body = {"group": "notes", "user_id": "ana", "input": facts(("Note", content)), **extra}
    return AddRequest.model_validate(body)


async def _run_count(engine: Engine, project: str) -> int:
    async with engine.db.connect() as conn:
        count = await conn.execute(
            select(func.count()).select_from(runs).where(runs.c.project == project)
        )
        return int(count.scalar_one())


@pytest.fixture
async def notes(engine: Engine, project: str) -> str:
    await engine.put_group(project, "notes", GROUP)
    return project


async def test_a_repeat_returns_the_first_run_and_is_processed_once(
    engine: Engine, notes: str
) -> None:
    first = await engine.admit(notes, _note("User keeps bees."), "add-1")
    assert not first.replayed
    done = await engine.wait_run(notes, first.run.run_id, 20)
    assert done.status.value == "completed", done.error
    again = await engine.admit(notes, _note("User keeps bees."), "add-1")
    assert again.replayed and again.run.run_id == first.run.run_id
    assert again.run.status.value == "completed"  # the run as it stands now
    await asyncio.sleep(0.3)  # a duplicate run, had one started, would commit meanwhile
    assert [m.content for m in await listing(engine, notes, group="notes", user_id="ana")] == [
        "User keeps bees."
    ]
    assert await _run_count(engine, notes) == 1


async def test_the_same_key_with_another_request_is_refused(engine: Engine, notes: str) -> None:
    await engine.admit(notes, _note("User keeps bees."), "add-2")
    with pytest.raises(InvalidRequest) as refused:
        await engine.admit(notes, _note("User keeps wasps."), "add-2")
    assert refused.value.kind == "conflict"
    assert [e.location for e in refused.value.errors] == ["header.Idempotency-Key"]
    assert "different request" in refused.value.detail
    assert await _run_count(engine, notes) == 1


async def test_one_request_spelled_two_ways_is_one_request(engine: Engine, notes: str) -> None:
    """The fingerprint is of the validated request: key order, a default spelled out and a
    time in another offset do not make another request."""
    dated = {"items": [{"topic": "Note", "content": "User moved."}], "created_at": "2026-01-02T10:00:00+02:00"}  # fmt: skip
    one = AddRequest.model_validate(
        {"group": "notes", "user_id": "ana", "input": {"pre_extracted": dated}}
    )
    other = AddRequest.model_validate(
        {
            "input": {"pre_extracted": {**dated, "created_at": "2026-01-02T08:00:00Z"}},
            "user_id": "ana",
            "group": "notes",
            "properties": None,
        }
    )
    first = await engine.admit(notes, one, "add-3")
    again = await engine.admit(notes, other, "add-3")
    assert again.replayed and again.run.run_id == first.run.run_id


async def test_keys_are_per_project(engine: Engine, notes: str) -> None:
    other = f"{notes}-other"
    await engine.put_group(other, "notes", GROUP)
    mine = await engine.admit(notes, _note("User keeps bees."), "shared-key")
    theirs = await engine.admit(other, _note("User keeps wasps."), "shared-key")
    assert not theirs.replayed and theirs.run.run_id != mine.run.run_id


async def test_concurrent_adds_with_one_key_start_one_run(engine: Engine, notes: str) -> None:
    """Twenty at once: they share group commits (the batch lets one claim the key) and
    race across transactions (the key's primary key serializes them)."""
    answers = await asyncio.gather(
        *(engine.admit(notes, _note("User keeps bees."), "burst") for _ in range(20))
    )
    assert len({a.run.run_id for a in answers}) == 1
    assert [a.replayed for a in answers].count(False) == 1
    await engine.wait_run(notes, answers[0].run.run_id, 20)
    assert await _run_count(engine, notes) == 1
    assert len(await listing(engine, notes, group="notes", user_id="ana")) == 1


async def test_a_refused_add_leaves_its_key_free(engine: Engine, notes: str) -> None:
    with pytest.raises(InvalidRequest):  # no such topic: refused at admission
        await engine.admit(
            notes,
            AddRequest.model_validate(
                {"group": "notes", "user_id": "ana", "input": facts(("Nope", "x"))}
            ),
            "add-4",
        )
    accepted = await engine.admit(notes, _note("User keeps bees."), "add-4")
    assert not accepted.replayed


@pytest.fixture
async def timed(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> AsyncIterator[tuple[Engine, ManualClock]]:
    clock = ManualClock(datetime(2026, 3, 1, tzinfo=UTC))
    settings = engine_settings(
        postgres.new_database(), tmp_path, idempotency_window_seconds=60, workers=2
    )
    engine = await start_engine(
        settings, llm=scripted_client(llm_server), embedder=HashEmbedder(), clock=clock
    )
    await engine.put_group("p", "notes", GROUP)
    yield engine, clock
    await engine.close()


async def test_a_key_names_its_add_for_the_configured_window(
    timed: tuple[Engine, ManualClock],
) -> None:
    engine, clock = timed
    first = await engine.admit("p", _note("User keeps bees."), "k1")
    clock.advance(59)
    assert (await engine.admit("p", _note("User keeps bees."), "k1")).replayed
    clock.advance(2)  # 61 s: past the window, the key names nothing; a new add takes it
    later = await engine.admit("p", _note("User keeps wasps."), "k1")
    assert not later.replayed and later.run.run_id != first.run.run_id
    assert (await engine.admit("p", _note("User keeps wasps."), "k1")).run.run_id == (
        later.run.run_id
    )
    await engine.admit("p", _note("User keeps ants."), "k2")
    clock.advance(61)
    assert await forget_expired_keys(engine.db, clock) == 2
    async with engine.db.connect() as conn:
        left = await conn.execute(select(func.count()).select_from(idempotency_keys))
        assert left.scalar_one() == 0
