"""Adds arriving together share one transaction, yet each stays its own acknowledgement."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.core.engine import Engine
from mnemo.core.records import RunRecord
from mnemo.core.transport import TransportUnavailable
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
