"""`mnemo serve` checks the configured LLM at start: an unreachable one is a warning naming
it, and `/readyz` and `mnemo status` name it too (it used to go unnoticed until an add failed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.ports import free_port
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_an_unreachable_llm_is_named_at_start_and_by_readyz_and_status(
    postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    port, dead_llm = free_port(), f"http://127.0.0.1:{free_port()}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env |= {
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_DATABASE_URL": postgres.new_database("endpoints"),
        "MNEMO_LLM_BASE_URL": dead_llm,
        "MNEMO_LLM_MODEL": "m",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_WORKERS": "2",
        "MNEMO_DB_POOL_SIZE": "3",
    }
    log_path = tmp_path / "serve.log"
    command = [sys.executable, "-m", "mnemo.cli.main", "serve", "--port", str(port),
               "--worker-processes", "0", "--data-dir", str(tmp_path / "data")]  # fmt: skip
    with log_path.open("w") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while "listening" not in log_path.read_text() or not _answers(url):
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        output = log_path.read_text()
        assert "WARNING: llm check failed" in output and dead_llm in output, output

        ready = httpx.get(f"{url}/readyz", timeout=30)
        # Advisory: named in the body, but reads and durable adds still work, so ready.
        assert ready.status_code == 200, ready.text
        failing = {c["name"]: c for c in ready.json()["checks"] if not c["ok"]}
        assert "llm" in failing and dead_llm in failing["llm"]["detail"]

        status = subprocess.run(
            [sys.executable, "-m", "mnemo.cli.main", "status", "--url", url],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert status.returncode != 0
        assert "llm server" in status.stdout and "FAILING" in status.stdout, status.stdout
        assert dead_llm in status.stdout
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False
