"""Adds arriving together share one transaction, yet each stays its own acknowledgement."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine.interfaces import CacheStats
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.core.engine import Engine
from mnemo.core.records import RunRecord
from mnemo.core.transport import TransportUnavailable
from mnemo.domain.idempotency import IdempotencyClaim
from mnemo.domain.inputs import AddInput
from mnemo.embedded.bus.postgres import PostgresBus
from mnemo.embedded.submitter import PostgresSubmitter, Submission
from mnemo.store import runs
from tests.integration.engine.helpers import add, facts, says

pytestmark = pytest.mark.integration


async def _transactions_of(engine: Engine, run_ids: list[str]) -> int:
    """How many transactions wrote these runs (rows of one transaction share xmin)."""
    async with engine.database.db.connect() as conn:
        result = await conn.execute(
            text("SELECT count(DISTINCT xmin::text) FROM runs WHERE run_id = ANY(:ids)"),
            {"ids": run_ids},
        )
        return int(result.scalar_one())


async def test_concurrent_adds_share_transactions_and_each_is_durable(
    engine: Engine, project: str
) -> None:
    bodies = [
        {"user_id": f"u{i % 5}", "input": facts(("UserKnowledge", f"fact {i}"))} for i in range(40)
    ]
    added = await asyncio.gather(*(add(engine, project, b) for b in bodies))
    run_ids = [r.run_id for r in added]

    assert len(set(run_ids)) == 40
    assert await _transactions_of(engine, run_ids) < 40  # grouped, not one commit per add
    for run_id in run_ids:  # every acknowledged add runs to completion
        assert (await engine.wait_run(project, run_id, 30)).status.value == "completed"


async def test_per_scope_order_holds_inside_a_shared_transaction(
    engine: Engine, project: str
) -> None:
    first = await add(
        engine, project, {"user_id": "ordered", "input": facts(("UserKnowledge", "a"))}
    )
    added = await asyncio.gather(
        *(
            add(engine, project, {"user_id": "ordered", "input": facts(("UserKnowledge", str(i)))})
            for i in range(10)
        )
    )
    done = [await engine.wait_run(project, r.run_id, 30) for r in [first, *added]]
    # A scope's runs complete in acknowledgement order (the bus keeps list order per key).
    finished = [d.updated_at for d in done]
    assert finished == sorted(finished)


async def test_one_failing_add_does_not_refuse_the_adds_it_was_grouped_with(
    engine: Engine, project: str
) -> None:
    earlier = await add(engine, project, {"user_id": "x", "input": facts(("UserKnowledge", "x"))})
    await engine.wait_run(project, earlier.run_id, 30)
    async with engine.database.db.connect() as conn:
        duplicate = dict(await runs.raw(conn, earlier.run_id) or {})

    outcomes = await asyncio.gather(
        engine.transport.submit(
            RunRecord.from_row(duplicate)
        ),  # same run_id again: a unique violation
        *(
            add(engine, project, {"user_id": f"y{i}", "input": facts(("UserKnowledge", "y"))})
            for i in range(8)
        ),
        return_exceptions=True,
    )

    assert isinstance(outcomes[0], IntegrityError)
    for run in outcomes[1:]:
        assert not isinstance(run, BaseException), run
        assert (await engine.wait_run(project, run.run_id, 30)).status.value == "completed"


class HeldSubmitter(PostgresSubmitter):
    """Group commit whose transactions wait until the test lets them through."""

    def __init__(self, db: AsyncEngine, release: asyncio.Event) -> None:
        super().__init__(db, PostgresBus(), max_batch=1, max_pending=1)
        self.release = release

    async def _write(self, batch: list[Submission]) -> list[BaseException | None]:
        await self.release.wait()
        return await super()._write(batch)


async def test_a_full_add_queue_refuses_at_once_with_503(engine: Engine, project: str) -> None:
    release = asyncio.Event()
    submitter = HeldSubmitter(engine.db, release)
    group = await engine.group(project, "default")

    def record(i: int) -> RunRecord:
        return RunRecord.new(
            run_id=f"{project}-{i}", project=project, group="default", config=group,
            input=AddInput.model_validate(says(f"fact {i}")), user_id="u1", properties={},
            root=None, now=engine.deps.clock.now(),
        )  # fmt: skip

    writing = asyncio.create_task(submitter.submit(record(1)))  # in its transaction
    await asyncio.sleep(0.05)
    waiting = asyncio.create_task(submitter.submit(record(2)))  # queued: the queue is full
    await asyncio.sleep(0.05)
    with pytest.raises(TransportUnavailable) as refused:
        await submitter.submit(record(3))
    assert refused.value.kind == "unavailable" and refused.value.retry_after
    assert "add queue is full" in refused.value.detail
    release.set()
    await asyncio.gather(writing, waiting)


async def test_a_batch_of_any_size_writes_with_statements_compiled_once(
    engine: Engine, project: str
) -> None:
    """The run rows, bus records and idempotency claims of a batch are one statement each
    whatever the batch's size: a multi-row VALUES compiled anew for every size, a fifth of
    the server's CPU at 500 adds/s (docs/benchmarks.md)."""
    submitter = PostgresSubmitter(engine.db, PostgresBus())
    group = await engine.group(project, "default")
    now = engine.deps.clock.now()
    serial = iter(range(1000))

    def submission() -> Submission:
        i = next(serial)
        run_id = f"{project}-sized-{i}"
        record = RunRecord.new(
            run_id=run_id, project=project, group="default", config=group,
            input=AddInput.model_validate(says(f"fact {i}")), user_id=f"u{i % 3}",
            properties={}, root=None, now=now,
        )  # fmt: skip
        claim = IdempotencyClaim(
            project=project, key=f"key-{i}", fingerprint="f", run_id=run_id,
            created_at=now, expires_at=now + timedelta(hours=1),
        )  # fmt: skip
        return Submission(record, claim)

    compiled: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany) -> None:
        misses = (CacheStats.CACHE_MISS, CacheStats.NO_CACHE_KEY)
        if statement.lstrip().upper().startswith("INSERT") and context.cache_hit in misses:
            compiled.append(statement)

    # One row is executed as such, more as a list: each form compiles once.
    for n in (1, 2):
        assert await submitter._write([submission() for _ in range(n)]) == [None] * n
    event.listen(engine.db.sync_engine, "after_cursor_execute", count)
    try:
        written = [await submitter._write([submission() for _ in range(n)]) for n in (3, 5, 9)]
    finally:
        event.remove(engine.db.sync_engine, "after_cursor_execute", count)

    assert written == [[None] * 3, [None] * 5, [None] * 9]
    assert compiled == []
    async with engine.database.db.connect() as conn:
        stored = await conn.execute(
            text("SELECT count(*) FROM runs WHERE run_id LIKE :prefix"),
            {"prefix": f"{project}-sized-%"},
        )
        assert stored.scalar_one() == 20
