"""Admission and refusal of a queued run exclude each other (the Kafka gateway's 503 vs the
extractor taking the record), on real Postgres."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from mnemo.core.records import RunRecord
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import RunState
from mnemo.domain.templates import group_from_template
from mnemo.store import runs
from mnemo.store.database import migrate
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration
NOW = datetime(2026, 11, 1, tzinfo=UTC)


def record() -> RunRecord:
    return RunRecord.new(
        run_id=str(uuid.uuid4()), project="p", group="default",
        config=group_from_template("default", "default"),
        input=AddInput.model_validate({"string": {"content": ["a fact"]}}),
        user_id="u", properties=None, root=None, now=NOW,
    )  # fmt: skip


async def test_refusal_and_admission_exclude_each_other(postgres: EmbeddedPostgres) -> None:
    url = postgres.new_database("admission")
    migrate(url, 384)
    db = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    taken, refused, retried = record(), record(), record()
    try:
        async with db.begin() as tx:
            await runs.create(tx, [r.to_row() for r in (taken, refused, retried)])
            row = await runs.admit(tx, taken.run_id, NOW)
            assert not isinstance(row, runs.Admission) and row["admitted_at"] == NOW
            assert not await runs.refuse(tx, taken.run_id)  # taken first: the add stands
            assert await runs.refuse(tx, refused.run_id)  # refused first: the row goes
            assert await runs.admit(tx, refused.run_id, NOW) is runs.Admission.unknown
            # A retry the Engine gave up on is not taken either, and a taken one stays.
            await runs.set_status(tx, [retried.run_id], RunState.failed, NOW, "boom")
            claimed = await runs.claim_failed(tx, "p", retried.run_id, NOW)
            assert claimed is not None and claimed[0]["admitted_at"] is None
            assert await runs.fail_retry(tx, retried.run_id, True, "boom", "down", NOW)
            assert await runs.admit(tx, retried.run_id, NOW) is runs.Admission.withdrawn
            await runs.claim_failed(tx, "p", retried.run_id, NOW)
            assert not isinstance(await runs.admit(tx, retried.run_id, NOW), runs.Admission)
            assert not await runs.fail_retry(tx, retried.run_id, True, "boom", "late", NOW)
            assert (await runs.raw(tx, retried.run_id) or {})["status"] == "running"
    finally:
        await db.dispose()
