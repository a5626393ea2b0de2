"""Consumer lag as the dashboard sums it (`sum by (group, topic)` over every scraped
target) equals the broker's truth with two replicas of a stage, and through a kill -9 and
restart of one of them: replicas do not multiply it and a dead consumer does not hide it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from mnemo.kafka.channels import channel_names
from mnemo.kafka.reader import partitions
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, wait_all
from tests.kafka.services import Service

pytestmark = pytest.mark.kafka
ADDS = 8


def exported_lag(texts: list[str], group: str) -> float:
    """What `sum by (group, topic) (mnemo_kafka_consumer_lag)` shows for `group`'s raw
    topic, summed over every target's /metrics."""
    return sum(
        s.value
        for text in texts
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "mnemo_kafka_consumer_lag" and s.labels["group"] == group
    )


async def true_lag(cluster: Cluster, group: str, topic: str) -> int:
    """End offsets minus the group's committed offsets, straight from the broker."""
    found = await partitions(cluster.ks.bootstrap_servers, [topic])
    tps = [TopicPartition(topic, p) for p in found[topic]]
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.ks.bootstrap_servers)
    consumer = AIOKafkaConsumer(bootstrap_servers=cluster.ks.bootstrap_servers)
    await admin.start()
    await consumer.start()
    try:
        committed = await admin.list_consumer_group_offsets(group, partitions=tps)
        ends = await consumer.end_offsets(tps)
        firsts = await consumer.beginning_offsets(tps)
    finally:
        await consumer.stop()
        await admin.close()
    return sum(ends[tp] - max(committed[tp].offset, firsts[tp]) for tp in tps)


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.5)


async def test_lag_is_counted_once_with_two_replicas_and_survives_a_restart(
    cluster: Cluster, project: str
) -> None:
    first = cluster.services["extractor"]
    second = Service("extractor", first.env, first.log_dir, replica=2)
    group, topic = cluster.ks.group_id("extractor"), channel_names(cluster.ks).raw
    targets = [first, second, *(s for n, s in cluster.services.items() if n != "extractor")]

    async def dashboard() -> float:
        texts = [generate_latest().decode()]  # the gateway (this process)
        for service in targets:
            if service.proc is not None and service.proc.poll() is None:
                texts.append(await asyncio.to_thread(service.metrics))
        return exported_lag(texts, group)

    async def agrees(expected: int | None = None) -> bool:
        truth = await true_lag(cluster, group, topic)
        shown = await dashboard()
        return shown == truth and (expected is None or truth == expected)

    await asyncio.to_thread(second.start)
    await asyncio.to_thread(second.wait_ready)
    cluster.llm.delay_seconds = 30  # extraction hangs: the group commits nothing meanwhile
    try:
        await eventually(lambda: agrees(0), "lag did not settle at 0", 60)
        run_ids = [
            (await add(cluster.engine, project, f"lag{i}", f"lag fact {i}")).run_id
            for i in range(ADDS)
        ]
        await eventually(lambda: agrees(ADDS), "lag with two replicas", 30)
        await asyncio.to_thread(second.kill9)  # one consumer dies...
        await asyncio.sleep(2 * cluster.ks.lag_interval_seconds)
        await eventually(lambda: agrees(ADDS), "lag while a consumer is down", 30)
        await asyncio.to_thread(second.start)  # ...and comes back
        cluster.llm.delay_seconds = 0
        await asyncio.to_thread(second.wait_ready)
        await wait_all(cluster.engine, project, run_ids, timeout=150)
        await eventually(lambda: agrees(0), "lag after the restart", 60)
    except AssertionError as exc:
        logs = f"{service_logs(cluster)}\n--- second replica\n{second.tail()}"
        raise AssertionError(f"{exc}\n{logs}") from exc
    finally:
        cluster.llm.delay_seconds = 0
        await asyncio.to_thread(second.stop)
