"""Completing runs at commit (`runs.record_commit`, one statement): each run's committed
operations accumulate over commits, the runs completed now are told apart from those
completed before, and listeners hear of every run, on real Postgres."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg import Notify
from sqlalchemy.ext.asyncio import create_async_engine

from mnemo.core.records import RunRecord
from mnemo.domain.inputs import AddInput
from mnemo.domain.templates import group_from_template
from mnemo.store import run_events, runs
from mnemo.store.database import migrate
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration
NOW = datetime(2026, 11, 1, tzinfo=UTC)


def record(at: datetime) -> RunRecord:
    return RunRecord.new(
        run_id=str(uuid.uuid4()), project="p", group="default",
        config=group_from_template("default", "default"),
        input=AddInput.model_validate({"string": {"content": ["a fact"]}}),
        user_id="u", properties=None, root=None, now=at,
    )  # fmt: skip


async def test_operations_accumulate_and_every_run_is_announced(
    postgres: EmbeddedPostgres,
) -> None:
    url = postgres.new_database("record_commit")
    migrate(url, 384)
    db = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    first, second = record(NOW - timedelta(seconds=5)), record(NOW - timedelta(seconds=3))
    later = NOW + timedelta(minutes=1)
    listener = await psycopg.AsyncConnection.connect(url, autocommit=True)
    try:
        await listener.execute(f"LISTEN {run_events.CHANNEL}")
        async with db.begin() as tx:
            await runs.create(tx, [r.to_row() for r in (first, second)])
        async with db.begin() as tx:
            by_run = {first.run_id: {"created": ["m1"], "updated": [], "deleted": []}}
            ids = [first.run_id, second.run_id, "no-such-run"]
            done = await runs.record_commit(tx, by_run, ids, NOW, "model-a")
        assert sorted(done) == sorted([first.created_at, second.created_at])
        async with db.begin() as tx:
            by_run = {first.run_id: {"created": [], "updated": ["m1"], "deleted": ["m2"]}}
            assert await runs.record_commit(tx, by_run, [first.run_id], later, "model-b") == []
        heard = [n.payload async for n in _notifications(listener, 2)]
        assert heard == [f"{first.run_id},{second.run_id},no-such-run", first.run_id]
        async with db.connect() as conn:
            one, two = await runs.raw(conn, first.run_id), await runs.raw(conn, second.run_id)
        assert one is not None and two is not None
        assert one["status"] == two["status"] == "completed"
        assert (one["produced_by"], one["updated_at"]) == ("model-b", later)
        stamp, then = NOW.isoformat(), later.isoformat()
        assert one["committed_operations"] == {
            "created": [{"memory_id": "m1", "committed_at": stamp}],
            "updated": [{"memory_id": "m1", "committed_at": then}],
            "deleted": [{"memory_id": "m2", "committed_at": then}],
        }
        assert two["committed_operations"] == {"created": [], "updated": [], "deleted": []}
    finally:
        await listener.close()
        await db.dispose()


async def _notifications(conn: psycopg.AsyncConnection, count: int) -> AsyncIterator[Notify]:
    async for notification in conn.notifies(timeout=10, stop_after=count):
        yield notification
