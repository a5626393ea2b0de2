"""Kafka mode: `retry_run` claims a failed run atomically, publishes its raw event once the
claim committed, and fails the run again (503) when the broker does not take it."""

from __future__ import annotations

import pytest

from mnemo.core.engine import Engine
from mnemo.core.transport import TransportUnavailable
from mnemo.domain.memory import Run, RunState
from mnemo.kafka.transport import KafkaTransport
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, memories, wait_all

pytestmark = pytest.mark.kafka


async def failed_run(cluster: Cluster, project: str, user: str, text: str) -> Run:
    cluster.llm.fail("extract", status=500, times=2)  # the services make 2 attempts
    run = await add(cluster.engine, project, user, text)
    try:
        await wait_all(cluster.engine, project, [run.run_id], timeout=60, status="failed")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{service_logs(cluster)}") from exc
    return await cluster.engine.get_run(project, run.run_id)


async def test_a_retry_the_broker_does_not_take_leaves_the_run_failed(
    cluster: Cluster, project: str
) -> None:
    engine = cluster.engine
    failed = await failed_run(cluster, project, "r1", "retry me")
    assert failed.error and "500" in failed.error
    # The same engine parts on a Kafka transport whose broker connection is closed.
    transport = KafkaTransport(cluster.settings.kafka, engine.db)
    await transport.start()
    await transport.stop()
    offline = Engine(engine.settings, engine.database, engine.deps, engine.groups, transport)

    with pytest.raises(TransportUnavailable) as refused:
        await offline.retry_run(project, failed.run_id)
    assert refused.value.kind == "unavailable" and refused.value.retry_after
    after = await engine.get_run(project, failed.run_id)
    assert after.status == RunState.failed
    assert after.error and after.error.startswith(failed.error)
    assert "[retry not started: ConnectionError" in after.error

    retried = await engine.retry_run(project, failed.run_id)
    assert retried.status == RunState.running
    await wait_all(engine, project, [failed.run_id], timeout=60)
    assert [m.content for m in await memories(engine, project, "r1")] == ["User said: retry me"]
