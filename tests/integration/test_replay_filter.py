"""What `mnemo replay` and `mnemo dlq replay` skip, decided against Postgres (no broker):
erased users' records by the tombstone's raw-log offsets, runs whose raw input is gone,
adds the gateway refused, and records older than the group's raw_input_days."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from mnemo.core.engine import Engine
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.forgetting import RawRecordFilter, gone_runs
from mnemo.kafka.reader import Stored
from mnemo.store import tombstones
from tests.integration.engine.helpers import add_and_wait

pytestmark = pytest.mark.integration

NOW = datetime.now(UTC)
TOPICS = [{"name": "Note", "description": "Notes.", "scoping": {"user_scoped": True}}]
PIPELINE = {"steps": [
    {"id": "extract", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
    {"id": "commit", "kind": "commit"},
]}  # fmt: skip


def record(project: str, user: str, offset: int, age: timedelta, **extra: object) -> tuple:
    event = RawEvent.model_validate(
        {"project": project, "group": "g", "user_id": user,
         "input": {"string": {"content": ["hello"]}}, **extra}
    )  # fmt: skip
    return Stored("raw.v1", 0, offset, None, b"", NOW - age), event


async def test_the_replay_filter_skips_what_is_forgotten(engine: Engine, project: str) -> None:
    await engine.put_group(
        project, "g", {"topics": TOPICS, "pipeline": PIPELINE, "retention": {"raw_input_days": 2}}
    )
    gone_user, kept_user = f"g-{uuid.uuid4().hex[:6]}", f"k-{uuid.uuid4().hex[:6]}"
    erased_run = await add_and_wait(
        engine, project, {"group": "g", "user_id": gone_user,
                          "input": {"pre_extracted": {"items": [{"topic": "Note", "content": "x"}]}}}
    )  # fmt: skip
    await engine.erase_user(project, gone_user)  # redacts the run (embedded: no raw log)
    async with engine.db.begin() as tx:  # as the distributed mode's erase records it
        position = {"topic": "raw.v1", "offsets": {"0": 10}}
        await tombstones.record(tx, project, gone_user, position, datetime.now(UTC))
    async with engine.db.connect() as conn:
        present, gone = await gone_runs(conn, [erased_run.run_id, "never-added"])
        assert present == {erased_run.run_id} and gone == {erased_run.run_id: "erased"}
        check = RawRecordFilter(conn, NOW)
        cases = {
            "erased run": (*record(project, gone_user, 50, timedelta(0)), erased_run.run_id),
            "refused": (*record(project, kept_user, 51, timedelta(0), origin="gateway"), "r1"),
            "erased user": (*record(project, gone_user, 9, timedelta(0)), "r2"),
            "after the erase": (*record(project, gone_user, 10, timedelta(0)), "r3"),
            "expired": (*record(project, kept_user, 52, timedelta(days=3)), "r4"),
            "fresh": (*record(project, kept_user, 53, timedelta(days=1)), "r5"),
        }
        reasons = {
            name: await check.skip(stored, event, run_id, present, gone)
            for name, (stored, event, run_id) in cases.items()
        }
    assert reasons == {
        "erased run": "erased",
        "refused": "refused",
        "erased user": "erased",
        "after the erase": None,  # its offset is past where the raw log ended at the erase
        "expired": "expired",
        "fresh": None,
    }
