"""`mnemo serve` supervises its worker processes: reaps, restarts with backoff, gives up.

The supervised command here is a stand-in worker (it signals ready like `python -m
mnemo.embedded` and then lives, or dies, as the test needs): supervision does not depend on
what the worker runs. `tests/integration/test_chaos.py` kills the real one.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from mnemo.cli import serving as serve_module
from mnemo.core.readiness import Check
from mnemo.embedded.processes import WorkerProcesses
from mnemo.settings import Settings
from tests.support.ports import free_port
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration


def stand_in(lives_seconds: float) -> list[str]:
    """A worker that signals ready, then lives `lives_seconds` and exits with code 3."""
    code = (
        "import os, pathlib, time; "
        "pathlib.Path(os.environ['MNEMO_WORKER_READY_FILE']).write_text(str(os.getpid())); "
        f"time.sleep({lives_seconds}); raise SystemExit(3)"
    )
    return [sys.executable, "-c", code]


def zombie(pid: int) -> bool:
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


async def test_a_killed_worker_is_reaped_reported_and_replaced(tmp_path: Path) -> None:
    workers = WorkerProcesses(
        Settings(data_dir=tmp_path), "postgresql://unused", 2, command=stand_in(600)
    )
    workers.start()
    try:
        await workers.wait_ready(60)
        victim, other = (p.pid for p in workers.processes)
        os.kill(victim, signal.SIGKILL)
        while workers.alive(workers.host, victim):
            workers.reap()
            await asyncio.sleep(0.01)
        assert workers.alive(workers.host, victim) is False
        assert workers.alive(workers.host, other) is True
        assert workers.alive("another-host", other) is None  # not ours to judge
        assert workers.check() == Check("worker_processes", True, "1 of 2 running (restarts: 0)")
        await workers.wait_ready(60)  # restarted after its backoff
        assert workers.restarts == 1 and victim not in {p.pid for p in workers.processes}
        assert not zombie(victim)
        assert workers.check().ok and workers.failure is None
    finally:
        workers.stop()
    assert all(p.returncode is not None for p in workers.processes)


async def test_five_deaths_within_a_minute_make_the_supervisor_give_up(tmp_path: Path) -> None:
    workers = WorkerProcesses(
        Settings(data_dir=tmp_path), "postgresql://unused", 1, command=stand_in(0.2)
    )
    reasons: list[str] = []
    workers.start()
    try:
        await asyncio.wait_for(workers.supervise(reasons.append), 60)
    finally:
        workers.stop()
    assert reasons == [workers.failure]
    assert reasons[0].startswith("worker processes died 5 times within 60 s")
    assert workers.restarts == 4
    assert workers.check() == Check("worker_processes", False, reasons[0])


async def test_serve_exits_with_an_error_when_its_workers_keep_dying(
    postgres: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(
        database_url=postgres.new_database(),
        data_dir=tmp_path,
        embedding_provider="hash",
        port=free_port(),
        auth_disabled=True,
        worker_processes=1,
    )

    def dying_workers(settings: Settings, url: str, count: int) -> WorkerProcesses:
        return WorkerProcesses(settings, url, count, command=stand_in(1.0)).start()

    monkeypatch.setattr(serve_module, "spawn_workers", dying_workers)
    with pytest.raises(serve_module.GaveUp, match="died 5 times within 60 s"):
        async with asyncio.timeout(120):
            await serve_module.serve(settings)


def beating() -> list[str]:
    """A worker that signals ready and refreshes its ready file every 0.1 s, as
    `python -m mnemo.embedded` does while its pipeline makes progress."""
    code = (
        "import os, pathlib, time; "
        "ready = pathlib.Path(os.environ['MNEMO_WORKER_READY_FILE']); "
        "ready.write_text(str(os.getpid()))\n"
        "while True:\n    os.utime(ready); time.sleep(0.1)"
    )
    return [sys.executable, "-c", code]


async def test_a_stopped_worker_is_named_then_killed_and_replaced(tmp_path: Path) -> None:
    """SIGSTOP (issue 33, failure 7): the worker lives, but shows no progress."""
    settings = Settings(
        data_dir=tmp_path,
        heartbeat_seconds=0.2,
        heartbeat_timeout_seconds=1.0,
        worker_stall_seconds=4.0,
    )
    workers = WorkerProcesses(settings, "postgresql://unused", 2, command=beating())
    workers.start()
    try:
        await workers.wait_ready(60)
        victim, other = (p.pid for p in workers.processes)
        os.kill(victim, signal.SIGSTOP)
        named: list[str] = []
        async with asyncio.timeout(60):  # a generous bound: the point is that it ends
            while workers.alive(workers.host, victim):
                check = workers.check()
                if not check.ok:
                    named.append(check.detail)
                workers.tick()
                await asyncio.sleep(0.05)
        assert named and f"worker process {victim} (slot 0) silent for" in named[0]
        assert all(str(other) not in n for n in named)  # the live one is never blamed
        await workers.wait_ready(60)
        assert workers.restarts == 1 and victim not in {p.pid for p in workers.processes}
        assert workers.check().ok
        assert not zombie(victim)
    finally:
        workers.stop()
