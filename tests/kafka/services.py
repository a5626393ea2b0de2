"""The four stage services as real subprocesses, for tests that kill and restart them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
STAGES = ("extractor", "buffer", "transformer", "committer")


@dataclass
class Service:
    name: str
    env: dict[str, str]
    log_dir: Path
    metrics_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    replica: int = 1  # a second replica of a stage logs to its own files
    # Stopped or killed by the test (not to be restarted), until it starts again.
    down_on_purpose: bool = True
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def log_name(self) -> str:
        suffix = f"-{self.replica}" if self.replica > 1 else ""
        return f"{self.name}{suffix}.{self.starts}.log"

    def start(self) -> None:
        with self._lock:
            self._start()

    def _start(self) -> None:
        self.down_on_purpose = False
        self.starts += 1
        log = open(self.log_dir / self.log_name, "wb")
        env = {**self.env, "MNEMO_METRICS_PORT": str(self.metrics_port)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"services.{self.name}"],
            env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def kill9(self) -> None:
        assert self.proc is not None
        with self._lock:
            self.down_on_purpose = True
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def restart_if_exited(self) -> bool:
        """Start the service again if it exited on its own (a crash, or the recovery
        watchdog's exit), as compose's `restart: unless-stopped` does."""
        with self._lock:
            if self.down_on_purpose or self.proc is None or self.proc.poll() is None:
                return False
            code = self.proc.returncode
            with open(self.log_dir / "keeper.log", "a") as note:
                note.write(f"{time.strftime('%H:%M:%S')} {self.log_name} exited {code}\n")
            self._start()
            return True

    def ensure_running(self) -> None:
        """Start the service if it is not running (a test that failed before restarting
        what it stopped), and wait until it is ready: each test starts with every stage up."""
        with self._lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
        self.wait_ready()

    def stop(self) -> None:
        self.down_on_purpose = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill9()

    def metrics(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()

    def wait_ready(self, timeout: float = 180) -> None:
        """Until /healthz answers: dependencies open, group joined, tables recovered."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc is None or self.proc.poll() is not None:
                # exited on its own (e.g. a stage leaving for a restart): start it, as the
                # cluster's keeper would; stopped or killed by the test: not ready
                restarted = self.restart_if_exited()
                alive = self.proc is not None and self.proc.poll() is None  # or the keeper did
                assert restarted or alive, self.tail()
            try:
                url = f"http://127.0.0.1:{self.metrics_port}/healthz"
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            assert time.monotonic() < deadline, f"{self.name} is not ready\n{self.tail()}"
            time.sleep(0.3)

    def tail(self, lines: int = 40) -> str:
        log = self.log_dir / self.log_name
        text = log.read_text(errors="replace") if log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def keep_up(services: list[Service], stop: threading.Event) -> None:
    """Restart services that exit on their own until `stop` is set (a thread's body)."""
    while not stop.wait(1.0):
        for service in services:
            service.restart_if_exited()


def stage_env(database_url: str, llm_url: str, prefix: str, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}",
        "MNEMO_DATABASE_URL": database_url,
        "MNEMO_DATA_DIR": str(data_dir),
        "MNEMO_LLM_BASE_URL": llm_url,
        "MNEMO_LLM_API_KEY": "x",
        "MNEMO_LLM_MAX_ATTEMPTS": "2",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        # reconcile's floor on the hash embedder's scale (the default is the bundled model's)
        "MNEMO_RECONCILE_MIN_SIMILARITY": "0.3",
        # The tests script extract and transform_with_context as two calls (the combined
        # call is tested in tests/integration/engine/test_extract_reconcile.py).
        "MNEMO_EXTRACT_RECONCILE_MAX_CHARS": "0",
        "MNEMO_DB_POOL_SIZE": "4",
        "MNEMO_KAFKA_TOPIC_PREFIX": prefix,
        "MNEMO_KAFKA_PARTITIONS": "4",
        "MNEMO_KAFKA_SESSION_TIMEOUT_SECONDS": "6",
        "MNEMO_KAFKA_BUFFER_TICK_SECONDS": "0.3",
        "MNEMO_KAFKA_LAG_INTERVAL_SECONDS": "1",
        "MNEMO_TRANSIENT_BACKOFF_SECONDS": "0.5",
        "MNEMO_KAFKA_RECOVERY_STALL_SECONDS": "20",
    }
