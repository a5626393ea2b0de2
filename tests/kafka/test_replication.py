"""Topics replicated below the settings refuse a start: the gateway's and every stage's,
with a message naming the topic and the setting (issue 39). Runs on the single broker: a
topic with 1 replica is below MNEMO_KAFKA_REPLICATION_FACTOR=2 there too."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mnemo.kafka.channels import UnderReplicated, ensure_channels
from mnemo.kafka.worker import REFUSED
from mnemo.settings import KafkaSettings
from tests.kafka.conftest import BOOTSTRAP
from tests.kafka.services import ROOT, stage_env
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.kafka


async def test_the_gateway_refuses_topics_with_fewer_replicas_than_configured(
    kafka_prefix: str,
) -> None:
    prefix = f"{kafka_prefix}-thin{uuid.uuid4().hex[:6]}"
    await ensure_channels(KafkaSettings(bootstrap_servers=BOOTSTRAP, topic_prefix=prefix))
    ks = KafkaSettings(bootstrap_servers=BOOTSTRAP, topic_prefix=prefix, replication_factor=2)
    with pytest.raises(UnderReplicated) as refused:
        await ensure_channels(ks)
    message = str(refused.value)
    # Which of the prefix's topics is named first follows the broker's listing order: the
    # pipeline's own (prefix.runs, ...) or a buffer table's changelog (prefix-buffer-...).
    assert f"topic {prefix}" in message
    assert "has 1 replica(s) per partition but MNEMO_KAFKA_REPLICATION_FACTOR is 2" in message


async def test_a_stage_refuses_to_start_and_says_which_topic_and_setting(
    kafka_prefix: str, postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    prefix = f"{kafka_prefix}-thin{uuid.uuid4().hex[:6]}"
    await ensure_channels(KafkaSettings(bootstrap_servers=BOOTSTRAP, topic_prefix=prefix))
    env = stage_env(postgres.new_database(), "http://127.0.0.1:9/v1", prefix, tmp_path)
    env["MNEMO_KAFKA_BOOTSTRAP_SERVERS"] = BOOTSTRAP
    env["MNEMO_KAFKA_REPLICATION_FACTOR"] = "2"
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "services.committer"], env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == REFUSED, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "refusing to start: topic " + prefix in out
    assert "MNEMO_KAFKA_REPLICATION_FACTOR is 2" in out
    assert "Traceback" not in out
