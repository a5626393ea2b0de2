"""A refused add (503 while the broker is down) is never processed: its record may still
reach the raw log (the producer keeps its batch), but the extractor drops it and `mnemo
replay` skips it, so it becomes neither a run nor a memory."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from aiokafka import AIOKafkaProducer
from sqlalchemy import select

from mnemo.core.records import RunRecord
from mnemo.core.transport import TransportUnavailable
from mnemo.domain.inputs import AddInput
from mnemo.domain.requests import InvalidRequest, ListRequest
from mnemo.kafka.events.codec import encode
from mnemo.kafka.replayops import replay_group
from mnemo.kafka.transport import KafkaTransport, raw_event
from mnemo.store.schema import runs
from tests.kafka.broker import broker_control, kafka_sh
from tests.kafka.conftest import GROUP, Cluster, service_logs
from tests.kafka.helpers import add, memories, wait_all

pytestmark = pytest.mark.kafka
__all__ = ["broker_control"]  # a fixture
USER = "refused-user"


async def new_record(cluster: Cluster, project: str, text: str) -> RunRecord:
    group = await cluster.engine.group(project, "kt")
    return RunRecord.new(
        run_id=str(uuid.uuid4()), project=project, group="kt", config=group,
        input=AddInput.model_validate({"string": {"content": [text]}}), user_id=USER,
        properties=None, root=None, now=cluster.engine.deps.clock.now(),
    )  # fmt: skip


async def test_a_refused_add_never_becomes_a_run_or_a_memory(
    cluster: Cluster, project: str, broker_control: None
) -> None:
    engine, timeout = cluster.engine, cluster.ks.produce_timeout_seconds
    transport = engine.transport
    assert isinstance(transport, KafkaTransport)
    kept = [(await add(engine, project, USER, f"kept {i}")).run_id for i in range(2)]
    await wait_all(engine, project, kept, timeout=90)

    refused: list[RunRecord] = []
    await asyncio.to_thread(kafka_sh, "down")
    try:
        for attempt in range(2):  # as the outage starts, and well into it
            started = time.monotonic()
            with pytest.raises(InvalidRequest) as answer:
                await add(engine, project, USER, f"refused add {attempt}")
            assert answer.value.kind == "unavailable"
            # Refused after mnemo's produce timeout (5 s here), not aiokafka's 40 s request
            # timeout nor never: the slack is for a loaded machine, the bound still tells them apart.
            assert time.monotonic() - started < timeout + 25, "not refused within the timeout"
            record = await new_record(cluster, project, f"refused record {attempt}")
            with pytest.raises(TransportUnavailable):
                await transport.submit(record)
            refused.append(record)
            await asyncio.sleep(timeout)
    finally:
        await asyncio.to_thread(kafka_sh, "up")

    # What the gateway's producer may still deliver once the broker is back: its records.
    producer = AIOKafkaProducer(bootstrap_servers=cluster.ks.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for record in refused:
            await producer.send_and_wait(
                transport.raw_topic, encode(raw_event(record)), key=record.scope_key.encode()
            )
    finally:
        await producer.stop()
    # Same scope, so the extractor handles the late records before this add.
    after = (await add(engine, project, USER, "after the outage")).run_id
    try:
        await wait_all(engine, project, [after], timeout=150)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{service_logs(cluster)}") from exc

    accepted = ["User said: kept 0", "User said: kept 1", "User said: after the outage"]
    async with engine.db.connect() as conn:
        rows = (await conn.execute(select(runs.c.run_id).where(runs.c.project == project))).all()
    assert sorted(r.run_id for r in rows) == sorted([*kept, after])
    assert sorted(m.content for m in await memories(engine, project, USER)) == sorted(accepted)

    await engine.put_group(project, "kt-replayed", GROUP)
    replayed = await replay_group(cluster.ks, engine.db, "kt", "kt-replayed", project=project)
    assert replayed.skipped["refused"] >= len(
        refused
    )  # plus any refused add the producer delivered
    assert len(replayed.run_ids) == len(accepted)
    await wait_all(engine, project, replayed.run_ids, timeout=120)
    found, _ = await engine.list_memories(
        project, ListRequest.model_validate({"group": "kt-replayed", "user_id": USER})
    )
    assert sorted(m.content for m in found) == sorted(accepted)
