"""The recall log's queue: bounded, oldest dropped first, written in batches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import pytest

from mnemo import metrics
from mnemo.clock import ManualClock
from mnemo.core.recall_log import Recall, RecallLog
from mnemo.store.recalls import INSERT_RECALLS, RECALL_COLUMNS


class FakeConnection:
    def __init__(self, db: FakeDatabase) -> None:
        self.db = db

    async def execute(self, statement: Any, columns: dict[str, list[Any]]) -> None:
        if self.db.down:
            raise ConnectionError("database down")
        assert statement is INSERT_RECALLS
        self.db.rows += _inserted_rows(columns)


def _inserted_rows(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The rows of the unnest INSERT, read back from its one array per column."""
    assert list(columns) == list(RECALL_COLUMNS)
    [count] = {len(values) for values in columns.values()}
    return [{name: values[i] for name, values in columns.items()} for i in range(count)]


class FakeDatabase:
    """Records the rows each insert writes; `down` makes every statement fail."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.down = False

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[FakeConnection]:
        yield FakeConnection(self)


def recall(user: str, *ids: str) -> Recall:
    return Recall("p", "g", user, {"desk": "d1"}, list(ids), datetime(2026, 1, 1, tzinfo=UTC))


def log_over(db: FakeDatabase, capacity: int = 3) -> RecallLog:
    return RecallLog(db, ManualClock(), capacity=capacity, flush_seconds=60)  # type: ignore[arg-type]


async def test_a_full_queue_drops_the_oldest_search() -> None:
    db = FakeDatabase()
    log = log_over(db)
    dropped = metrics.RECALLS_DROPPED._value.get()
    for i in range(5):
        log.record(recall("ann", f"m{i}"))
    assert log.waiting == 3
    assert metrics.RECALLS_DROPPED._value.get() - dropped == 2
    assert await log.flush() == 3
    assert [r["memory_id"] for r in db.rows] == ["m2", "m3", "m4"]
    assert db.rows[0]["properties"] == {"desk": "d1"} and db.rows[0]["user_id"] == "ann"
    await log.close()


async def test_flush_for_writes_only_when_the_scope_waits() -> None:
    db = FakeDatabase()
    log = log_over(db, capacity=10)
    log.record(recall("ann", "m1", "m2", "m1"))  # a repeated id is one row
    await log.flush_for("p", "g", "bob")
    assert db.rows == []
    await log.flush_for("p", "g", "ann")
    assert [r["memory_id"] for r in db.rows] == ["m1", "m2"]
    await log.close()


async def test_a_failed_write_keeps_the_queue_within_its_bound() -> None:
    db = FakeDatabase()
    log = log_over(db, capacity=2)
    log.record(recall("ann", "m1"))
    log.record(recall("ann", "m2"))
    db.down = True
    with pytest.raises(ConnectionError):
        await log.flush()
    assert log.waiting == 2
    log.record(recall("ann", "m3"))  # full: m1 goes
    db.down = False
    await log.flush()
    assert [r["memory_id"] for r in db.rows] == ["m2", "m3"]
    await log.close()


async def test_the_background_task_writes_without_being_asked() -> None:
    db = FakeDatabase()
    log = RecallLog(db, ManualClock(), flush_seconds=0.05)  # type: ignore[arg-type]
    log.record(recall("ann", "m1"))
    for _ in range(100):
        if db.rows:
            break
        await asyncio.sleep(0.02)
    assert [r["memory_id"] for r in db.rows] == ["m1"]
    await log.close()
    log.record(recall("ann", "m2"))  # closed: ignored
    assert log.waiting == 0
