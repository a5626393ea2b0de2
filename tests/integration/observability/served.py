"""`mnemo serve` as a real process (gateway plus worker processes) for observability tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Served:
    url: str
    key: str
    process: subprocess.Popen[bytes]
    log: Path

    def http(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, timeout=70, headers={"Authorization": f"Bearer {self.key}"}
        )


@contextmanager
def mnemo_serve(
    database_url: str, data_dir: Path, llm_url: str, extra_env: Mapping[str, str] = {}
) -> Iterator[Served]:
    """`mnemo serve --worker-processes 1` on `database_url`, its LLM at `llm_url`; stopped
    with SIGTERM on exit."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PROMETHEUS_"))},
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_DATABASE_URL": database_url,
        "MNEMO_LLM_BASE_URL": llm_url,
        "MNEMO_LLM_API_KEY": "scripted",
        "MNEMO_LLM_MODEL": "scripted",
        "MNEMO_LLM_MAX_ATTEMPTS": "2",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_WORKERS": "4",
        "MNEMO_WORKER_PROCESSES": "1",  # the tests read one worker's figures
        "MNEMO_DB_POOL_SIZE": "5",
        "MNEMO_BUS_POLL_SECONDS": "0.05",
        "MNEMO_EXTRACT_RECONCILE_MAX_CHARS": "0",  # the scripted extract, then reconcile
        "MNEMO_BUFFER_TICK_SECONDS": "0.2",
        **extra_env,
    }
    log = data_dir / "serve.log"
    command = [sys.executable, "-m", "mnemo.cli.main", "serve", "--worker-processes", "1"]
    command += ["--print-key-to", str(data_dir / "key")]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port), "--data-dir", str(data_dir)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process, log)
        key = (data_dir / "key").read_text().strip()
        assert key and key not in log.read_text(), log.read_text()
        yield Served(url, key, process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mnemo serve exited: {log.read_text()}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"mnemo serve was not ready: {log.read_text()}")
