"""Poison records land in the DLQ with their error, mark their run failed, and replay."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiokafka import AIOKafkaProducer
from typer.testing import CliRunner

from mnemo.cli.main import app
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


async def publish_raw(cluster: Cluster, value: bytes, key: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=cluster.ks.bootstrap_servers, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(channel_names(cluster.ks).raw, value, key=key)
    finally:
        await producer.stop()


async def test_invalid_payload_is_dead_lettered(cluster: Cluster) -> None:
    await publish_raw(cluster, b"{not json", b"junk")
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
    again = await replay_dlq(cluster.ks, cluster.engine.db)  # only entries added since
    assert {e.offset for e in again.replayed}.isdisjoint({e.offset for e in replayed})


async def test_replay_all_does_not_re_drive_a_record_that_failed_again(cluster: Cluster) -> None:
    await publish_raw(cluster, b"{still bad", b"bad")
    [entry] = await dlq_with(cluster, lambda r: r.payload == "{still bad" and not r.replay_of)
    first = await replay_dlq(cluster.ks, cluster.engine.db)
    assert entry.offset in {e.offset for e in first.replayed}
    marker = f"{entry.partition}:{entry.offset}"
    [again] = await dlq_with(cluster, lambda r: r.replay_of == marker)
    second = await replay_dlq(
        cluster.ks, cluster.engine.db
    )  # "all": the record that failed again is skipped
    assert (again.offset, "failed_after_replay") in {(e.offset, r) for e, r in second.skipped}
    assert again.offset not in {e.offset for e in second.replayed}
    skipped = (await replay_dlq(cluster.ks, cluster.engine.db)).skipped
    assert again.offset not in {e.offset for e, _ in skipped}
    named = await replay_dlq(
        cluster.ks, cluster.engine.db, [again.offset]
    )  # named: replayed all the same
    assert [e.offset for e in named.replayed] == [again.offset]


async def test_dlq_list_json_names_the_offset_replay_takes(cluster: Cluster) -> None:
    [entry, *_] = await dlq_with(cluster, lambda r: True)
    env = {"MNEMO_KAFKA_BOOTSTRAP_SERVERS": cluster.ks.bootstrap_servers,
           "MNEMO_KAFKA_TOPIC_PREFIX": cluster.ks.topic_prefix}  # fmt: skip
    result = await asyncio.to_thread(CliRunner().invoke, app, ["dlq", "list", "--json"], env=env)
    assert result.exit_code == 0, result.output
    listed = [json.loads(line) for line in result.stdout.splitlines()]
    first = next(e for e in listed if e["dlq_offset"] == entry.offset)
    assert first["dlq_partition"] == entry.partition
    assert (first["source_partition"], first["source_offset"]) == (
        entry.record.partition, entry.record.offset,
    )  # fmt: skip
    assert "offset" not in first
