"""Chaos: `mnemo serve` under a steady load of adds, kill -9 of its worker process, then of
its Postgres. Every acknowledged run completes exactly once, and /readyz tells the truth
throughout: never ready with the killed worker, not ready while the database is down or no
worker is alive, ready again after recovery.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.support.ports import free_port
from tests.support.postgres import make_traversable_for_postgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _postgres_reaches_tmp_path(tmp_path: Path) -> None:
    """These tests put the data dir in `tmp_path` (see make_traversable_for_postgres)."""
    make_traversable_for_postgres(tmp_path)


ROOT = Path(__file__).resolve().parents[2]
USERS = 32


@dataclass
class Sample:
    """One look at /readyz: when (monotonic), its status and body."""

    at: float
    status: int
    body: dict[str, Any]

    def worker_pids(self) -> set[int]:
        return {w["pid"] for w in self.body.get("workers", []) if w["role"] == "embedded"}

    def failing(self) -> set[str]:
        return {c["name"] for c in self.body.get("checks", []) if not c["ok"]}


WORKER_CHECKS = {"worker_processes", "workers"}


@dataclass
class Observed:
    acked: dict[str, str] = field(default_factory=dict)  # run_id -> content
    refused: Counter[int] = field(default_factory=Counter)  # status -> count
    samples: list[Sample] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def since(self, at: float) -> list[Sample]:
        return [s for s in self.samples if s.at >= at]


def start_serve(
    data_dir: Path, port: int, llm: ScriptedLLMServer, log: Path
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}",
        "MNEMO_LLM_BASE_URL": llm.base_url,
        "MNEMO_LLM_API_KEY": "x",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_AUTH_DISABLED": "true",
        "MNEMO_WORKERS": "4",
        "MNEMO_WORKER_PROCESSES": "1",  # readiness must drop with the one worker killed
        "MNEMO_BUS_POLL_SECONDS": "0.1",
        "MNEMO_HEARTBEAT_SECONDS": "0.5",
        "MNEMO_HEARTBEAT_TIMEOUT_SECONDS": "3",
    }
    cmd = [sys.executable, "-m", "mnemo.cli.main", "serve", "--port", str(port)]
    return subprocess.Popen(
        [*cmd, "--data-dir", str(data_dir)],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


async def load(http: httpx.AsyncClient, seen: Observed, lane: int) -> None:
    """Adds from one client, a few per second, until told to stop."""
    i = 0
    while not seen.stop.is_set():
        content = f"lane {lane} fact {i}"
        body = {
            "user_id": f"u{(lane * 7 + i) % USERS}",
            "input": {"string": {"content": [content]}},
        }
        try:
            response = await http.post("/v1/memories", json=body)
            if response.status_code == 200:
                seen.acked[response.json()["run_id"]] = content
            else:
                assert response.status_code == 503, response.text  # never a 500
                assert response.headers.get("retry-after")
                seen.refused[response.status_code] += 1
        except httpx.TransportError:
            seen.refused[0] += 1
        i += 1
        await asyncio.sleep(0.3)


async def probe(http: httpx.AsyncClient, seen: Observed) -> None:
    while not seen.stop.is_set():
        asked = time.monotonic()  # a sample counts from when it was asked, not answered
        try:
            response = await http.get("/readyz")
            seen.samples.append(Sample(asked, response.status_code, response.json()))
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.05)


def gone(pid: int) -> bool:
    """The process has exited (it may still wait, a zombie, for its parent to reap it)."""
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True


async def kill_9(pid: int) -> float:
    """SIGKILL `pid` and return the moment it had exited."""
    os.kill(pid, signal.SIGKILL)
    await until(lambda: gone(pid), 10, f"pid {pid} to exit")
    return time.monotonic()


def database_refuses(socket_dir: str) -> bool:
    try:
        psycopg.connect(
            f"postgresql://postgres:@/postgres?host={socket_dir}", connect_timeout=1
        ).close()
    except psycopg.OperationalError:
        return True
    return False


async def until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def scenario(base_url: str, data_dir: Path, server: subprocess.Popen[bytes]) -> Observed:
    seen = Observed()
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:
        tasks = [asyncio.create_task(probe(http, seen))]
        tasks += [asyncio.create_task(load(http, seen, lane)) for lane in range(4)]
        try:
            await until(lambda: len(seen.acked) >= 20, 60, "first adds")
            ready = [s for s in seen.samples if s.status == 200][-1]
            (worker,) = ready.worker_pids()
            killed_worker_at = await kill_9(worker)
            await until(
                lambda: any(s.status == 200 for s in seen.since(killed_worker_at)),
                120,
                "readiness after the worker's restart",
            )
            acked = len(seen.acked)
            await until(lambda: len(seen.acked) >= acked + 20, 60, "adds after the restart")
            lines = (data_dir / "pg" / "postmaster.pid").read_text().splitlines()
            postmaster, socket_dir = int(lines[0]), lines[4]
            await kill_9(postmaster)
            await until(lambda: database_refuses(socket_dir), 10, "the database to refuse")
            killed_pg_at = time.monotonic()
            await until(
                lambda: any(s.status == 200 for s in seen.since(killed_pg_at)),
                120,
                "readiness after Postgres's restart",
            )
            acked = len(seen.acked)
            await until(lambda: len(seen.acked) >= acked + 20, 60, "adds after Postgres's restart")
        finally:
            seen.stop.set()
            await asyncio.gather(*tasks)
        assert server.poll() is None, "mnemo serve exited"
        check_readiness(seen, worker, killed_worker_at, killed_pg_at)
        await check_runs(http, seen)
    return seen


def check_readiness(
    seen: Observed, worker: int, killed_worker_at: float, killed_pg_at: float
) -> None:
    worker_phase = [s for s in seen.since(killed_worker_at) if s.at < killed_pg_at]
    # Never ready with the killed worker; not ready until its successor runs.
    assert all(worker not in s.worker_pids() for s in worker_phase if s.status == 200)
    first_ready = next(i for i, s in enumerate(worker_phase) if s.status == 200)
    assert first_ready > 0, "ready right after the worker was killed"
    # Not ready meanwhile because the worker is gone (worker_processes) or because its
    # successor has not sent a heartbeat yet (workers): the supervisor may restart it
    # between two looks.
    unexplained = [s for s in worker_phase[:first_ready] if not s.failing() & WORKER_CHECKS]
    assert not unexplained, [(s.status, s.body) for s in unexplained]
    # Not ready while the database is down; ready once it is back.
    pg_phase = seen.since(killed_pg_at)
    first_ready = next(i for i, s in enumerate(pg_phase) if s.status == 200)
    assert first_ready > 0, "ready right after Postgres was killed"
    assert "database" in pg_phase[0].failing()
    # Then, once it answers again, until a worker's heartbeat reaches it, or while this
    # process still reports the adds that failed during the outage (database_writes, for
    # a bounded window), or a worker the outage took down is being replaced.
    outage = {"database", "workers", "database_writes", "worker_processes"}
    unexplained = [s.body for s in pg_phase[:first_ready] if not s.failing() & outage]
    assert not unexplained, unexplained
    assert pg_phase[-1].status == 200, pg_phase[-1].body
    assert all(s.worker_pids() and s.body["checks"] for s in seen.samples if s.status == 200)


async def check_runs(http: httpx.AsyncClient, seen: Observed) -> None:
    """Every acknowledged run completed and created exactly one memory, none twice."""
    created: Counter[str] = Counter()
    for run_id, content in seen.acked.items():
        run = (await http.get(f"/v1/runs/{run_id}", params={"wait": 60})).json()
        assert run["status"] == "completed", (content, run)
        (memory,) = run["committed_operations"]["created"]
        created[memory["memory_id"]] += 1
    assert set(created.values()) == {1}
    contents: Counter[str] = Counter()
    for user in range(USERS):
        listed = await http.post("/v1/memories/list", json={"user_id": f"u{user}", "limit": 100})
        assert listed.status_code == 200, listed.text
        contents.update(m["content"] for m in listed.json()["memories"])
    for content in seen.acked.values():
        assert contents[f"User said: {content}"] == 1, content
    assert max(contents.values()) == 1  # an add refused mid-commit may exist, never twice


def test_kill_9_of_the_worker_and_the_postmaster_under_load(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with ScriptedLLMServer(echo=True) as llm:
        server = start_serve(tmp_path / "data", port, llm, log)
        try:
            base_url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 180
            while True:
                assert server.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "mnemo serve did not become ready"
                try:
                    if httpx.get(f"{base_url}/readyz", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            seen = asyncio.run(scenario(base_url, tmp_path / "data", server))
            assert seen.refused[0] == 0, "a connection was reset: adds must get a 503 instead"
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    text = log.read_text()
    assert "was killed by SIGKILL" in text and "restarting it in" in text
    assert "the embedded Postgres (pid" in text and "is running again" in text
    assert len(text) < 400_000, "the log grew too much during the outage"
