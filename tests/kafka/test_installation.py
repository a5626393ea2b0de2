"""One installation behind a gateway and its stages (issue 39): a stage started with another
database, or another topic prefix, refuses to start and says why, instead of joining its
group, reporting healthy and dropping the adds of its partitions."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.kafka.installation import HEADER, WrongInstallation, claim_for_gateway
from mnemo.kafka.worker import REFUSED
from mnemo.settings import KafkaSettings
from tests.kafka.conftest import BOOTSTRAP, Cluster
from tests.kafka.services import ROOT, stage_env
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.kafka


async def start_committer(cluster: Cluster, database_url: str, prefix: str, tmp: Path) -> str:
    """Run a committer replica with these settings until it exits; its output."""
    env = stage_env(database_url, cluster.llm.base_url, prefix, tmp)
    env["MNEMO_KAFKA_BOOTSTRAP_SERVERS"] = BOOTSTRAP
    env["MNEMO_KAFKA_REPLICATION_FACTOR"] = str(cluster.ks.replication_factor)
    env["MNEMO_KAFKA_MIN_INSYNC_REPLICAS"] = str(cluster.ks.min_insync_replicas)
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "services.committer"], env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == REFUSED, out
    assert "Traceback" not in out
    return out


async def test_a_stage_on_another_database_refuses_to_start(
    cluster: Cluster, postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    other = postgres.new_database()  # empty: the stage migrates it, no gateway claimed it
    out = await start_committer(cluster, other, cluster.ks.topic_prefix, tmp_path)
    assert "refusing to start: committer: no gateway has used this database" in out
    assert "MNEMO_DATABASE_URL" in out
    # It refused before its worker started: no heartbeat (none is written before), no
    # partition taken.


async def test_a_stage_on_another_topic_prefix_refuses_to_start(
    cluster: Cluster, tmp_path: Path
) -> None:
    misspelt = cluster.ks.topic_prefix + "x"
    out = await start_committer(cluster, cluster.database_url, misspelt, tmp_path)
    assert (
        f"this database belongs to the installation on topic prefix '{cluster.ks.topic_prefix}'"
        f", but MNEMO_KAFKA_TOPIC_PREFIX is '{misspelt}'"
    ) in out


async def test_a_second_gateway_on_another_prefix_is_refused_and_the_records_carry_the_id(
    cluster: Cluster,
) -> None:
    db = cluster.engine.db
    ks = KafkaSettings(bootstrap_servers=BOOTSTRAP, topic_prefix="elsewhere")
    with pytest.raises(WrongInstallation, match="topic prefix 'mnemo-t"):
        await claim_for_gateway(db, ks)
    same = await claim_for_gateway(db, cluster.ks)  # a second gateway on the same topics
    transport = cluster.engine.transport
    assert getattr(transport, "installation_id", None) == same
    assert HEADER == "mnemo-installation"
