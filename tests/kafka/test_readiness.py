"""The distributed gateway's /readyz rule: the database and the broker answer, and every
stage service has a fresh heartbeat; a stage that dies is named until it is back."""

from __future__ import annotations

import asyncio
import time

import pytest

from mnemo.core.readiness import Readiness, readiness
from tests.kafka.conftest import Cluster

pytestmark = pytest.mark.kafka
STALE_AFTER = 6.0  # seconds without a heartbeat (services beat every 2 s)


async def look(cluster: Cluster) -> Readiness:
    engine = cluster.engine
    return await readiness(engine.db, engine.transport, STALE_AFTER, None)


async def until(cluster: Cluster, wanted: bool, timeout: float = 90) -> Readiness:
    deadline = time.monotonic() + timeout
    while True:
        report = await look(cluster)
        if report.ready == wanted:
            return report
        assert time.monotonic() < deadline, report
        await asyncio.sleep(0.2)


async def test_ready_with_every_stage_alive_and_a_dead_stage_is_named(cluster: Cluster) -> None:
    report = await until(cluster, True)
    assert {w.role for w in report.workers} == {"extractor", "buffer", "transformer", "committer"}
    assert [c.name for c in report.checks] == ["database", "broker", "workers"]
    assert report.checks[1].ok and "kafka" in report.checks[1].detail
    buffer = cluster.services["buffer"]
    await asyncio.to_thread(buffer.kill9)
    try:
        report = await until(cluster, False)
        (failing,) = [c for c in report.checks if not c.ok]
        assert failing.name == "workers" and "buffer" in failing.detail
        assert "extractor" not in failing.detail
    finally:
        buffer.start()
        await asyncio.to_thread(buffer.wait_ready)
    await until(cluster, True)
