"""The embedded Postgres: kill -9 of the postmaster (the server answers 503 with Retry-After
meanwhile, and restarts it), and kill -9 of a process holding it (it must not keep Postgres
running after the next clean stop)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from mnemo.store.database import HANDLES_FILE, start_embedded
from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import make_traversable_for_postgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _postgres_reaches_tmp_path(tmp_path: Path) -> None:
    """These tests put the data dir in `tmp_path` (see make_traversable_for_postgres)."""
    make_traversable_for_postgres(tmp_path)


ROOT = Path(__file__).resolve().parents[2]


def postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "pg" / "postmaster.pid").read_text().split()[0])


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_killed_postmaster_means_503_until_the_server_has_restarted_it(tmp_path: Path) -> None:
    settings = gateway_settings(None, tmp_path, auth_disabled=True)  # type: ignore[arg-type]
    with ScriptedLLMServer(echo=True) as llm:
        server = LiveServer(settings, llm, watch_postgres=True).start()
        try:
            body = {"user_id": "u1", "input": {"string": {"content": ["before"]}}}
            assert httpx.post(f"{server.url}/v1/memories", json=body).status_code == 200
            dead = postmaster_pid(tmp_path)
            os.kill(dead, signal.SIGKILL)
            wait_until(lambda: not running(dead), 10, "the postmaster to exit")

            refused = httpx.post(f"{server.url}/v1/memories", json=body)
            if refused.status_code == 503:  # else the server had already restarted it
                assert refused.headers["content-type"] == "application/problem+json"
                assert int(refused.headers["retry-after"]) > 0
            else:
                assert refused.status_code == 200, refused.text  # never a 500

            def ready() -> bool:
                return httpx.get(f"{server.url}/readyz").status_code == 200

            wait_until(ready, 60, "readiness after the restart")
            assert postmaster_pid(tmp_path) != dead
            after = {"user_id": "u1", "input": {"string": {"content": ["after"]}}}
            run = httpx.post(f"{server.url}/v1/memories", json=after).json()
            done = httpx.get(f"{server.url}/v1/runs/{run['run_id']}", params={"wait": 30})
            assert done.json()["status"] == "completed"
        finally:
            server.stop()


def test_while_the_database_is_down_adds_and_readyz_answer_503_with_retry_after(
    tmp_path: Path,
) -> None:
    settings = gateway_settings(None, tmp_path, auth_disabled=True)  # type: ignore[arg-type]
    with ScriptedLLMServer(echo=True) as llm:
        server = LiveServer(settings, llm).start()  # nothing restarts it here
        try:
            dead = postmaster_pid(tmp_path)
            os.kill(dead, signal.SIGKILL)
            wait_until(lambda: not running(dead), 10, "the postmaster to exit")
            body = {"user_id": "u1", "input": {"string": {"content": ["lost?"]}}}
            for _ in range(3):  # pooled connections fail once each, new ones are refused
                refused = httpx.post(f"{server.url}/v1/memories", json=body)
                assert refused.status_code == 503, refused.text
                assert int(refused.headers["retry-after"]) > 0
                assert "temporarily unavailable" in refused.json()["detail"]
            ready = httpx.get(f"{server.url}/readyz")
            assert ready.status_code == 503
            assert int(ready.headers["retry-after"]) > 0
            assert ready.json()["errors"][0]["location"] == "database"
        finally:
            server.stop()


HOLD = """
import sys, time
from pathlib import Path
from mnemo.store.database import start_embedded
start_embedded(Path(sys.argv[1]))
print("up", flush=True)
time.sleep(600)
"""


def test_a_process_killed_while_holding_postgres_does_not_keep_it_running(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}"}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], env=env, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"up"
        holder.kill()  # SIGKILL: it never lets go of its handle
        holder.wait()
        handles = tmp_path / "pg" / HANDLES_FILE
        assert str(holder.pid) in handles.read_text()

        server, _ = start_embedded(tmp_path)  # a later start of the same data folder
        postmaster = server.get_pid()
        assert running(postmaster)
        assert str(holder.pid) not in handles.read_text()
        server.cleanup()  # the last user lets go: Postgres stops
        wait_until(lambda: not running(postmaster), 30, "Postgres to stop")
    finally:
        holder.kill()
