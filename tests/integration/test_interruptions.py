"""A real `mnemo serve` interrupted the unlucky ways of issue 33: its Postgres frozen
(SIGSTOP of the postmaster and every backend), a worker process frozen (SIGSTOP), the server
killed (-9) in the middle of erasing a user. Adds answer 503 rather than hang, /readyz names
what is wrong, the frozen worker is replaced, the half-done erase is finished after the
restart, and nothing acknowledged is lost. Bounds are generous: they say that it answers,
not how fast.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.integration.test_chaos import ROOT, free_port, gone, until
from tests.support.postgres import make_traversable_for_postgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _postgres_reaches_tmp_path(tmp_path: Path) -> None:
    make_traversable_for_postgres(tmp_path)


@pytest.fixture
def echo_llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True) as llm:
        yield llm


def serve(data_dir: Path, port: int, llm: ScriptedLLMServer, log: Path, **env: str) -> Any:
    variables = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}",
        "MNEMO_LLM_BASE_URL": llm.base_url,
        "MNEMO_LLM_API_KEY": "x",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_AUTH_DISABLED": "true",
        "MNEMO_WORKERS": "4",
        "MNEMO_WORKER_PROCESSES": "1",
        "MNEMO_BUS_POLL_SECONDS": "0.1",
        "MNEMO_HEARTBEAT_SECONDS": "0.5",
        "MNEMO_HEARTBEAT_TIMEOUT_SECONDS": "3",
        **env,
    }
    cmd = [sys.executable, "-m", "mnemo.cli.main", "serve", "--port", str(port)]
    return subprocess.Popen(
        [*cmd, "--data-dir", str(data_dir)],
        env=variables,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: kill -9 takes the whole server
    )


def stop(server: Any) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def postmaster(data_dir: Path) -> tuple[int, str]:
    lines = (data_dir / "pg" / "postmaster.pid").read_text().splitlines()
    return int(lines[0]), lines[4]


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


async def ready(http: httpx.AsyncClient, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = await http.get("/readyz")
            if response.status_code == 200:
                return dict(response.json())
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the server never became ready"
        await asyncio.sleep(0.2)


def add_body(user: str, content: str) -> dict[str, Any]:
    return {"user_id": user, "input": {"string": {"content": [content]}}}


async def completed(http: httpx.AsyncClient, run_ids: list[str]) -> None:
    for run_id in run_ids:
        run = (await http.get(f"/v1/runs/{run_id}", params={"wait": 60})).json()
        assert run["status"] == "completed", run


def test_a_frozen_postgres_gets_503_not_a_hang_and_service_resumes(
    tmp_path: Path, echo_llm: ScriptedLLMServer
) -> None:
    port, data = free_port(), tmp_path / "data"
    server = serve(data, port, echo_llm, tmp_path / "serve.log",
                   MNEMO_ADD_TIMEOUT_SECONDS="5", MNEMO_DB_CONNECT_TIMEOUT_SECONDS="2")  # fmt: skip

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
            await ready(http)
            first = await http.post("/v1/memories", json=add_body("u1", "I like tea"))
            assert first.status_code == 200, first.text
            pm, _ = postmaster(data)
            frozen = [pm, *children(pm)]
            for pid in frozen:
                os.kill(pid, signal.SIGSTOP)
            try:
                refused = await http.post("/v1/memories", json=add_body("u1", "I like coffee"))
                assert refused.status_code == 503, refused.text
                assert int(refused.headers["retry-after"]) > 0
                not_ready = await http.get("/readyz")
                assert not_ready.status_code == 503
                failing = {e["location"] for e in not_ready.json()["errors"]}
                assert "database" in failing or "database_writes" in failing, failing
            finally:
                for pid in frozen:
                    os.kill(pid, signal.SIGCONT)
            await ready(http)
            accepted = None
            for _ in range(100):  # pooled connections broken by the freeze are replaced
                accepted = await http.post("/v1/memories", json=add_body("u1", "I like mate"))
                if accepted.status_code == 200:
                    break
                assert accepted.status_code == 503, accepted.text
                await asyncio.sleep(0.5)
            assert accepted is not None and accepted.status_code == 200, accepted.text
            await completed(http, [first.json()["run_id"], accepted.json()["run_id"]])

    try:
        asyncio.run(scenario())
        assert server.poll() is None, "mnemo serve exited"
    finally:
        stop(server)


def test_a_stopped_worker_process_is_named_then_replaced_and_its_runs_complete(
    tmp_path: Path, echo_llm: ScriptedLLMServer
) -> None:
    port, data = free_port(), tmp_path / "data"
    server = serve(data, port, echo_llm, tmp_path / "serve.log",
                   MNEMO_WORKER_PROCESSES="2", MNEMO_WORKER_STALL_SECONDS="8")  # fmt: skip

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
            body = await ready(http)
            victim = min(w["pid"] for w in body["workers"] if w["role"] == "embedded")
            os.kill(victim, signal.SIGSTOP)
            acked = []
            for i in range(20):
                response = await http.post("/v1/memories", json=add_body(f"u{i}", f"fact {i}"))
                assert response.status_code == 200, response.text
                acked.append(response.json()["run_id"])
            named = None
            deadline = time.monotonic() + 120
            while named is None:
                assert time.monotonic() < deadline, "/readyz never named the stopped worker"
                response = await http.get("/readyz")
                if response.status_code == 503:
                    named = next(
                        (e["message"] for e in response.json()["errors"]
                         if f"worker process {victim}" in e["message"]), None,
                    )  # fmt: skip
                await asyncio.sleep(0.2)
            assert "silent for" in named
            await until(lambda: gone(victim), 120, "the stopped worker to be killed")
            await ready(http)
            await completed(http, acked)  # including those it held when it froze

    try:
        asyncio.run(scenario())
        assert server.poll() is None, "mnemo serve exited"
    finally:
        stop(server)


MEMORIES = 2000


def _imported(user: str, start: int) -> dict[str, Any]:
    """500 memories of `user` for POST /v1/import (its vectors computed on arrival)."""
    at = "2026-01-01T00:00:00Z"
    return {
        "memories": [
            {"id": str(uuid.uuid4()), "group": "default", "topic": "UserKnowledge",
             "user_id": user, "content": f"{user} remembers thing {i}", "created_at": at,
             "updated_at": at, "event_time": at, "event_time_end": at}
            for i in range(start, start + 500)
        ]
    }  # fmt: skip


def _pending(socket_dir: str) -> Callable[[], int]:
    def count() -> int:
        with psycopg.connect(f"postgresql://postgres:@/postgres?host={socket_dir}") as conn:
            row = conn.execute("SELECT count(*) FROM pending_erasures").fetchone()
        return int(row[0]) if row else 0

    return count


def test_kill_9_in_the_middle_of_an_erase_converges_to_nothing_readable(
    tmp_path: Path, echo_llm: ScriptedLLMServer
) -> None:
    port, data, log = free_port(), tmp_path / "data", tmp_path / "serve.log"
    env = {"MNEMO_RETENTION_SWEEP_SECONDS": "1"}
    user = f"victim-{uuid.uuid4().hex[:6]}"
    server = serve(data, port, echo_llm, log, **env)
    base = f"http://127.0.0.1:{port}"

    async def fill() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            await ready(http)
            for start in range(0, MEMORIES, 500):
                response = await http.post("/v1/import", json=_imported(user, start))
                assert response.status_code == 200, response.text
            listed = await http.post("/v1/memories/list", json={"user_id": user, "limit": 1})
            assert listed.json()["total"] == MEMORIES

    try:
        asyncio.run(fill())
        pm, socket_dir = postmaster(data)
        dsn = f"postgresql://postgres:@/postgres?host={socket_dir}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            before = conn.execute("SELECT count(*) FROM erasures").fetchone()
            assert before == (0,)
            # The erase's request in flight; kill -9 once its tombstone is committed.
            eraser = subprocess.Popen(
                [sys.executable, "-c",
                 f"import httpx; httpx.delete('{base}/v1/users/{user}', timeout=300)"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            deadline = time.monotonic() + 120
            while conn.execute("SELECT count(*) FROM erasures").fetchone() == (0,):
                assert time.monotonic() < deadline, "the erase never wrote its tombstone"
                time.sleep(0.005)
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        eraser.wait(60)
        # Cut short: its clean-up had not committed when the server died.
        assert postmaster_alive(pm)  # the server's own process group, not Postgres's
        assert _pending(socket_dir)() == 1
        make_traversable_for_postgres(tmp_path)  # again: a parallel pytest may reset it
        server = serve(data, port, echo_llm, log, **env)

        async def after_restart() -> None:
            async with httpx.AsyncClient(base_url=base, timeout=120) as http:
                await ready(http)
                deadline = time.monotonic() + 120
                while True:
                    listed = await http.post("/v1/memories/list", json={"user_id": user})
                    assert listed.status_code == 200, listed.text
                    if listed.json()["total"] == 0:
                        break
                    assert time.monotonic() < deadline, "the erase was never finished"
                    await asyncio.sleep(0.5)
                found = await http.post(
                    "/v1/memories/search", json={"query": "remembers thing", "user_id": user}
                )
                assert found.json()["memories"] == []

        asyncio.run(after_restart())
        _, socket_dir = postmaster(data)
        with psycopg.connect(f"postgresql://postgres:@/postgres?host={socket_dir}") as conn:
            assert conn.execute("SELECT count(*) FROM pending_erasures").fetchone() == (0,)
            completed_at = conn.execute("SELECT completed_at FROM erasures").fetchone()
            assert completed_at is not None and completed_at[0] is not None
    finally:
        stop(server)


def postmaster_alive(pid: int) -> bool:
    return not gone(pid)
