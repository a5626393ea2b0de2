"""The supervisor restarts a program that dies, with backoff, reports it, gives up on a
program that keeps dying, and stops everything it started (real child processes)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from mnemo.supervisor import Program, Supervisor


def program(tmp_path: Path, name: str, code: str) -> Program:
    return Program(name, [sys.executable, "-c", code], dict(os.environ), tmp_path / f"{name}.log")


async def until(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)


async def test_a_killed_program_is_restarted_and_reported_and_stop_ends_all(
    tmp_path: Path,
) -> None:
    sleeper = program(tmp_path, "stage", "import time; print('up', flush=True); time.sleep(60)")
    other = program(tmp_path, "other", "import time; time.sleep(60)")
    said: list[str] = []
    supervisor = Supervisor([sleeper, other], backoff=0.1, report=said.append)
    running = asyncio.create_task(supervisor.run())
    await until(lambda: other.proc is not None and sleeper.log.exists(), 60)
    await until(lambda: "up" in sleeper.log.read_text(), 60)
    assert sleeper.proc is not None
    first = sleeper.proc.pid
    os.kill(first, signal.SIGKILL)
    # `restarts` counts before the new process is spawned (an await): on a loaded machine the
    # old, dead process is still `proc` for a while, so wait for the new pid itself.
    await until(lambda: sleeper.proc is not None and sleeper.proc.pid != first, 60)
    assert sleeper.restarts == 1
    assert any(f"stage (pid {first}) exited with signal SIGKILL; restarting" in s for s in said)
    await until(lambda: sleeper.log.read_text().count("up") == 2, 60)  # the log is appended
    supervisor.stop()
    assert await asyncio.wait_for(running, 30) == 0
    assert all(p.proc is not None and p.proc.returncode is not None for p in (sleeper, other))
    assert other.restarts == 0


async def test_a_program_that_keeps_dying_is_restarted_and_the_rest_keep_running(
    tmp_path: Path,
) -> None:
    """One crashing replica must not stop the healthy rest (issue 39: five deaths in a
    minute used to stop the whole stack)."""
    crasher = program(tmp_path, "crasher", "import sys; sys.exit(3)")
    healthy = program(tmp_path, "healthy", "import time; time.sleep(60)")
    said: list[str] = []
    supervisor = Supervisor(
        [healthy, crasher], backoff=0.05, backoff_cap=0.2, max_deaths=3, window=30,
        report=said.append,
    )  # fmt: skip
    running = asyncio.create_task(supervisor.run())
    await until(lambda: crasher.restarts >= 5, 60)
    assert not running.done()
    assert healthy.proc is not None and healthy.proc.returncode is None  # still up
    assert healthy.restarts == 0
    waits = [s for s in said if s.startswith("crasher (pid") and "restarting in" in s]
    assert [w.split("restarting in ")[1].split(" s")[0] for w in waits[:4]] == [
        "0.05",
        "0.1",
        "0.2",
        "0.2",
    ]
    assert any(
        s.startswith("crasher is crashing in a loop (3 deaths within 30 s, last: status 3)")
        for s in said
    )
    supervisor.stop()
    assert await asyncio.wait_for(running, 30) == 0
    assert healthy.proc.returncode is not None  # stopped at the end
