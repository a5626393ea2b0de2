"""The broker stops and starts again: adds answer 503 meanwhile, and every run completes."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from mnemo.core.readiness import readiness
from mnemo.domain.requests import InvalidRequest
from mnemo.store.schema import runs
from tests.kafka.broker import broker_control, kafka_sh
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, memories, wait_all

pytestmark = pytest.mark.kafka
__all__ = ["broker_control"]  # a fixture


async def test_broker_restart_is_survived(
    cluster: Cluster, project: str, broker_control: None
) -> None:
    engine = cluster.engine
    first = [(await add(engine, project, f"b{i % 3}", f"before {i}")).run_id for i in range(6)]
    await asyncio.to_thread(kafka_sh, "down")
    try:
        with pytest.raises(InvalidRequest) as refused:
            await add(engine, project, "b0", "while the broker is down")
        assert refused.value.kind == "unavailable"
        report = await readiness(engine.db, engine.transport, 30.0, None)
        assert not report.ready and report.checks[1].name == "broker", report
    finally:
        await asyncio.to_thread(kafka_sh, "up")
    async with engine.database.db.connect() as conn:
        rows = (await conn.execute(select(func.count()).where(runs.c.project == project))).scalar()
    assert rows == len(first), "a refused add left its run row behind"
    second = [(await add(engine, project, f"b{i % 3}", f"after {i}")).run_id for i in range(6)]
    try:
        await wait_all(engine, project, first + second, timeout=150)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{service_logs(cluster)}") from exc
    contents = sorted(
        [m.content for u in range(3) for m in await memories(engine, project, f"b{u}")]
    )
    assert contents == sorted(
        [f"User said: before {i}" for i in range(6)] + [f"User said: after {i}" for i in range(6)]
    )
