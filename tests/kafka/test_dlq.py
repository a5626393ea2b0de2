"""Poison records land in the DLQ with their error, mark their run failed, and replay."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaProducer

from mnemo.domain.memory import RunState
from mnemo.kafka.channels import channel_names
from mnemo.kafka.dlqops import list_dlq, replay_dlq
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, memories, wait_all

pytestmark = pytest.mark.kafka


async def dlq_with(cluster: Cluster, predicate, timeout: float = 60):  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = [e for e in await list_dlq(cluster.ks) if predicate(e.record)]
        if found:
            return found
        assert asyncio.get_running_loop().time() < deadline, service_logs(cluster)
        await asyncio.sleep(0.5)


async def test_invalid_payload_is_dead_lettered(cluster: Cluster) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=cluster.ks.bootstrap_servers, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(channel_names(cluster.ks).raw, b"{not json", key=b"junk")
    finally:
        await producer.stop()
    [entry] = await dlq_with(cluster, lambda r: r.payload == "{not json")
    assert entry.record.reason == "invalid_payload"
    assert entry.record.service == "extractor"
    assert "ValidationError" in entry.record.error


async def test_llm_retries_exhausted_fail_the_run_and_a_replay_completes_it(
    cluster: Cluster, project: str
) -> None:
    cluster.llm.fail("extract", status=500, times=2)  # the services make 2 attempts
    run = await add(cluster.engine, project, "poison", "I will fail once")
    await wait_all(cluster.engine, project, [run.run_id], timeout=60, status="failed")
    failed = await cluster.engine.get_run(project, run.run_id)
    assert failed.error and "500" in failed.error
    [entry] = await dlq_with(cluster, lambda r: run.run_id in r.run_ids)
    assert entry.record.reason == "llm"
    replayed = (await replay_dlq(cluster.ks, cluster.engine.db)).replayed
    assert run.run_id in {r for e in replayed for r in e.record.run_ids}
    await wait_all(cluster.engine, project, [run.run_id], timeout=60)
    assert (await cluster.engine.get_run(project, run.run_id)).status == RunState.completed
    assert [m.content for m in await memories(cluster.engine, project, "poison")] == [
        "User said: I will fail once"
    ]
    again = (await replay_dlq(cluster.ks, cluster.engine.db)).replayed  # the junk, dead again
    assert {e.offset for e in again}.isdisjoint({e.offset for e in replayed})
