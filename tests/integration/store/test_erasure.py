"""A user's erase counts and cleans up every run it covers, even when a pipeline transaction
that met the tombstone redacted some of them first (a buffer sweep does so within a second of
any erase), on real Postgres."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from mnemo.core.records import RunRecord
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import RunState
from mnemo.domain.templates import group_from_template
from mnemo.store import erasure, runs, tombstones
from mnemo.store.database import migrate
from mnemo.store.schema import memories
from mnemo.store.schema import runs as runs_table
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration
NOW = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
async def db(postgres: EmbeddedPostgres) -> AsyncIterator[AsyncEngine]:
    url = postgres.new_database("erasure")
    migrate(url, 384)
    engine = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    yield engine
    await engine.dispose()


async def add_run(db: AsyncEngine, user: str, status: RunState) -> str:
    run = RunRecord.new(
        run_id=str(uuid.uuid4()), project="p", group="default",
        config=group_from_template("default", "default"),
        input=AddInput.model_validate({"string": {"content": [f"{user} said so"]}}),
        user_id=user, properties=None, root=None, now=NOW,
    )  # fmt: skip
    async with db.begin() as tx:
        await runs.create(tx, [run.to_row()])
        await runs.set_status(tx, [run.run_id], status, NOW)
    return run.run_id


async def add_memory(db: AsyncEngine, user: str | None, run_id: str) -> str:
    memory_id = str(uuid.uuid4())
    row = {
        "id": memory_id, "project": "p", "group": "default", "topic": "Facts",
        "user_id": user, "properties": {}, "content": f"written by {run_id}",
        "embedding": [0.1] * 384, "status": "active", "version": 1, "run_ids": [run_id],
        "created_at": NOW, "updated_at": NOW, "event_time": NOW, "event_time_end": NOW,
        "written_by_run_id": run_id, "operation": "create",
    }  # fmt: skip
    async with db.begin() as tx:
        await tx.execute(insert(memories).values(**row))
    return memory_id


async def test_runs_redacted_by_a_sweep_mid_erase_are_still_covered(db: AsyncEngine) -> None:
    done = await add_run(db, "vic", RunState.completed)
    held = await add_run(db, "vic", RunState.in_buffer)
    refused = await add_run(db, "vic", RunState.running)  # the Kafka gateway's 503, below
    theirs = await add_run(db, "ann", RunState.in_buffer)
    written = {await add_memory(db, "vic", done), await add_memory(db, None, done)}
    kept = await add_memory(db, "ann", theirs)

    # The erase's first transaction: the tombstone, and the runs it covers as they stand.
    async with db.begin() as tx:
        seq = await tombstones.record(tx, "p", "vic", None, NOW)
        seen = await erasure.runs_before(tx, "p", "vic", seq)
    assert seen == {done: "completed", held: "in_buffer", refused: "running"}
    # A stage meets the tombstone before the erase's second transaction and redacts the
    # runs it holds: they no longer name their user. And an add in flight is refused.
    async with db.begin() as tx:
        met = await tombstones.erased_among(tx, [done, held, theirs])
        await erasure.redact_erased_runs(tx, met, NOW)
        assert await runs.refuse(tx, refused)
    assert met == {done, held}
    async with db.begin() as tx:
        assert await erasure.runs_before(tx, "p", "vic", seq) == {}

    async with db.begin() as tx:
        report = await erasure.erase_user(tx, "p", "vic", seq, NOW, seen)
    assert (report.runs_redacted, report.runs_stopped, report.memories) == (2, 1, 2), report
    async with db.connect() as conn:
        left = set((await conn.execute(select(memories.c.id))).scalars())
        statuses = {r.run_id: (r.status, r.redaction, r.user_id) for r in await conn.execute(
            select(runs_table.c.run_id, runs_table.c.status, runs_table.c.redaction,
                   runs_table.c.user_id))}  # fmt: skip
    assert left == {kept} and not written & left  # the shared memory the run wrote too
    assert statuses[held] == ("failed", "erased", None)
    assert statuses[done] == ("completed", "erased", None)
    assert statuses[theirs] == ("in_buffer", None, "ann")


async def test_an_erase_alone_reports_the_runs_it_found(db: AsyncEngine) -> None:
    done = await add_run(db, "vic", RunState.completed)
    queued = await add_run(db, "vic", RunState.running)
    await add_memory(db, "vic", done)
    async with db.begin() as tx:
        seq = await tombstones.record(tx, "p", "vic", None, NOW)
    async with db.begin() as tx:
        report = await erasure.erase_user(tx, "p", "vic", seq, NOW)
    assert (report.runs_redacted, report.runs_stopped, report.memories) == (2, 1, 1), report
    later = await add_run(db, "vic", RunState.running)  # admitted after: a new start
    async with db.begin() as tx:
        assert await erasure.runs_before(tx, "p", "vic", seq) == {}
        assert await tombstones.erased_among(tx, [done, queued, later]) == {done, queued}
