"""The distributed mode on a 3-broker KRaft cluster (deploy/kafka, KAFKA_BROKERS=3), topics
replicated 3 with min.insync.replicas 2, under steady adds (`load.Load`): kill -9 of the
active controller and of another broker, a rolling restart of every broker, a rolling
restart of every stage, and Postgres stopped for 30 s. After each: every accepted run
completed exactly once, each scope in add order, and the only refusals are 503s after the
produce timeout (or the database's, while it is down). scripts/test.sh runs these in its
cluster phase."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from tests.kafka.cluster.load import Load, wait_in_sync
from tests.kafka.conftest import BROKERS, Cluster, service_logs
from tests.kafka.services import STAGES
from tests.support.postgres import EmbeddedPostgres

pytestmark = [pytest.mark.kafka, pytest.mark.kafka_cluster]
KAFKA_SH = Path(__file__).resolve().parents[3] / "deploy" / "kafka" / "kafka.sh"


@pytest.fixture(autouse=True)
def three_brokers() -> None:
    if BROKERS < 3 or "KAFKA_DATA_DIR" not in os.environ:
        pytest.skip("needs the 3-broker cluster scripts/test.sh starts (KAFKA_BROKERS=3)")


def kafka_sh(*args: str) -> str:
    done = subprocess.run(["bash", str(KAFKA_SH), *args], timeout=240,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, f"kafka.sh {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout.strip()


def only_produce_timeouts(load: Load, timeout: float) -> None:
    """Every refusal was the produce timeout's 503: never an instant error."""
    wrong = [r for r in load.refused if r.status != 503 or r.waited < timeout * 0.9]
    assert not wrong, f"refusals other than the produce timeout: {wrong[:5]}"


async def under_load(cluster: Cluster, project: str, disrupt, timeout: float = 600) -> Load:  # type: ignore[no-untyped-def]
    load = Load(cluster.engine, project)
    load.start()
    try:
        await load.until_accepted(4)
        await disrupt(load)
        await load.until_accepted(4)
    finally:
        await load.stop()
    try:
        await load.verify(timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{service_logs(cluster)}") from exc
    return load


async def test_kill_9_of_the_active_controller_then_of_another_broker(
    cluster: Cluster, project: str
) -> None:
    killed: list[int] = []

    async def disrupt(load: Load) -> None:
        controller = int(await asyncio.to_thread(kafka_sh, "controller"))
        other = next(n for n in range(1, 4) if n != controller)
        for node in (controller, other):
            await asyncio.to_thread(kafka_sh, "kill-node", str(node))
            killed.append(node)
            await load.until_accepted(4)  # adds keep being accepted with one broker gone
            await asyncio.to_thread(kafka_sh, "up-node", str(node))
            await wait_in_sync(cluster.ks)

    load = await under_load(cluster, project, disrupt)
    assert len(set(killed)) == 2
    only_produce_timeouts(load, cluster.ks.produce_timeout_seconds)
    print(f"kill -9: {len(load.run_ids)} runs accepted, {len(load.refused)} refused")


async def test_a_rolling_restart_of_every_broker(cluster: Cluster, project: str) -> None:
    async def disrupt(load: Load) -> None:
        for node in (1, 2, 3):
            await asyncio.to_thread(kafka_sh, "down-node", str(node))
            await load.until_accepted(4)
            await asyncio.to_thread(kafka_sh, "up-node", str(node))
            await wait_in_sync(cluster.ks)

    load = await under_load(cluster, project, disrupt)
    only_produce_timeouts(load, cluster.ks.produce_timeout_seconds)
    print(f"rolling broker restart: {len(load.run_ids)} accepted, {len(load.refused)} refused")


async def test_a_rolling_restart_of_every_stage(cluster: Cluster, project: str) -> None:
    async def disrupt(load: Load) -> None:
        for name in STAGES:
            service = cluster.services[name]
            await asyncio.to_thread(service.stop)
            service.start()
            await asyncio.to_thread(service.wait_ready)
            await load.until_accepted(4)

    load = await under_load(cluster, project, disrupt)
    assert not load.refused, load.refused[:5]  # the gateway never noticed


async def test_postgres_stopped_for_30_s(
    cluster: Cluster, project: str, postgres: EmbeddedPostgres
) -> None:
    starts = {name: s.starts for name, s in cluster.services.items()}

    async def disrupt(load: Load) -> None:
        await asyncio.to_thread(postgres.server._stop)
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.to_thread(postgres.server.ensure_postgres_running)

    load = await under_load(cluster, project, disrupt)
    # Refused while the database was down: 503 (or its connection error); nothing else.
    assert all(r.status in (503, 0) for r in load.refused), load.refused[:5]
    # The stages backed off and resumed: none exited (the keeper would have restarted it).
    after = {name: s.starts for name, s in cluster.services.items()}
    assert after == starts, f"a stage exited during the outage\n{service_logs(cluster)}"
    print(f"Postgres outage: {len(load.run_ids)} accepted, {len(load.refused)} refused")
