"""A run that outlives its time budget fails with a clear, retryable error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.engine import Engine
from mnemo.deps import Deps
from mnemo.domain.memory import RunState
from mnemo.embedded.bus.base import Record
from mnemo.embedded.startup import start_engine
from mnemo.embedded.transport import EmbeddedTransport
from mnemo.embedded.worker import WorkerPool
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.store.schema import bus_records
from tests.integration.conftest import engine_settings, script_echo_pipeline, scripted_client
from tests.integration.engine.helpers import add, listing, says
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture
async def budget_engine(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path
) -> AsyncIterator[Engine]:
    settings = engine_settings(postgres.new_database(), tmp_path, run_time_budget_seconds=1.0)
    engine = await start_engine(settings, llm=scripted_client(llm), embedder=HashEmbedder())
    yield engine
    await engine.close()


async def test_a_run_past_its_budget_fails_and_a_retry_runs_it_again(
    budget_engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    script_echo_pipeline(llm)
    llm.delay_seconds = 4.0  # every LLM answer takes longer than the whole budget
    slow = await add(budget_engine, project, {"user_id": "u1", "input": says("I like tea")})
    failed = await budget_engine.wait_run(project, slow.run_id, 60)
    assert failed.status == RunState.failed
    assert failed.error is not None
    assert failed.error.startswith("RunTimeBudgetExceeded: ")
    assert "MNEMO_RUN_TIME_BUDGET_SECONDS" in failed.error and "/retry" in failed.error

    llm.delay_seconds = 0.0
    await budget_engine.retry_run(project, slow.run_id)
    done = await budget_engine.wait_run(project, slow.run_id, 60)
    assert done.status == RunState.completed and done.error is None
    assert [m.content for m in await listing(budget_engine, project, user_id="u1")] == [
        "I like tea"
    ]


class SleepyRunner:
    """A pipeline step stuck in a database statement (what a budget must also cut short)."""

    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    async def handle(self, tx: AsyncConnection, record: Record) -> None:
        await tx.execute(text("SELECT pg_sleep(60)"))


async def test_a_run_cut_short_mid_statement_is_failed_and_acknowledged(
    budget_engine: Engine, project: str
) -> None:
    transport = budget_engine.transport
    assert isinstance(transport, EmbeddedTransport)
    await transport.stop()  # this test's worker takes the record instead
    run = await add(budget_engine, project, {"user_id": "u2", "input": says("stuck")})
    pool = WorkerPool(SleepyRunner(budget_engine.deps), transport.bus, 1, 0.05, 0.5)  # type: ignore[arg-type]
    assert await pool.run_once()
    failed = await budget_engine.get_run(project, run.run_id)
    assert failed.status == RunState.failed
    assert failed.error is not None and "0.5 s" in failed.error
    async with budget_engine.db.connect() as conn:
        left = (await conn.execute(select(func.count()).select_from(bus_records))).scalar_one()
    assert left == 0  # acknowledged: the scope behind it is free
