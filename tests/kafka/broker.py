"""Stopping and starting the suite's own broker (deploy/kafka/kafka.sh, KAFKA_DATA_DIR)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

KAFKA_SH = Path(__file__).resolve().parents[2] / "deploy" / "kafka" / "kafka.sh"


def kafka_sh(command: str) -> None:
    subprocess.run(["bash", str(KAFKA_SH), command], check=True, timeout=180,
                   capture_output=True)  # fmt: skip


@pytest.fixture
def broker_control() -> None:
    if "KAFKA_DATA_DIR" not in os.environ or os.environ.get("MNEMO_KAFKA_BOOTSTRAP_SERVERS"):
        pytest.skip("needs the broker this suite runner started (KAFKA_DATA_DIR exported)")
    if subprocess.run(["bash", str(KAFKA_SH), "status"], capture_output=True).returncode != 0:
        pytest.skip("the broker is not one deploy/kafka/kafka.sh manages")
