"""Keeping a set of local processes running, as compose's `restart: unless-stopped` would.

Each `Program` is started in order (waiting for its health URL, if it has one, before the
next starts). A program that exits while the supervisor is not stopping is reported and
started again after a backoff that doubles with each quick death (from `backoff` up to
`backoff_cap` seconds) and resets once it has stayed up for `window` seconds. A program
that dies `max_deaths` times within `window` seconds is crashing in a loop: the supervisor
says so and goes on restarting it every `backoff_cap` seconds, while every other program
keeps running (one crashing replica must not take the healthy rest down with it). Only a
program that never became healthy at start makes it give up (status 1). SIGINT / SIGTERM
stop every program (SIGTERM, then SIGKILL after `stop_timeout`) and end the supervisor
with status 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx


@dataclass
class Program:
    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    health_url: str | None = None
    proc: asyncio.subprocess.Process | None = None
    deaths: list[float] = field(default_factory=list)  # monotonic times of recent deaths
    restarts: int = 0


class GaveUp(RuntimeError):
    """A program did not start: the message says which and where its log is."""


def say(message: str) -> None:
    print(f"[supervisor] {message}", file=sys.stderr, flush=True)


@dataclass
class Supervisor:
    programs: list[Program]
    backoff: float = 1.0
    backoff_cap: float = 30.0
    window: float = 60.0
    max_deaths: int = 5
    health_timeout: float = 300.0
    stop_timeout: float = 20.0
    report: Callable[[str], None] = say
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> int:
        """Start and supervise until stopped (0) or a program fails to start (1)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.stop)
        try:
            for program in self.programs:
                await self._start(program)
                if program.health_url and not await self._healthy(program):
                    raise GaveUp(f"{program.name} did not answer {program.health_url}; "
                                 f"see {program.log}")  # fmt: skip
            self.report("all started; Ctrl-C stops all")
            await asyncio.gather(*(self._watch(p) for p in self.programs))
            return 0
        except GaveUp as exc:
            self.report(f"giving up: {exc}")
            return 1
        finally:
            await self._stop_all()

    def stop(self) -> None:
        self._stopping.set()

    async def _watch(self, program: Program) -> None:
        while not self._stopping.is_set():
            assert program.proc is not None
            exited = asyncio.ensure_future(program.proc.wait())
            stopping = asyncio.ensure_future(self._stopping.wait())
            await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if self._stopping.is_set():
                exited.cancel()
                return
            await self._restart(program, exited.result())

    async def _restart(self, program: Program, code: int) -> None:
        now = time.monotonic()
        program.deaths = [t for t in program.deaths if now - t < self.window] + [now]
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"status {code}"
        deaths = len(program.deaths)
        wait = min(self.backoff_cap, self.backoff * 2 ** (deaths - 1))
        if deaths >= self.max_deaths:
            wait = self.backoff_cap
            self.report(f"{program.name} is crashing in a loop ({deaths} deaths within "
                        f"{self.window:g} s, last: {how}); the others keep running; "
                        f"see {program.log}")  # fmt: skip
        self.report(f"{program.name} (pid {program.proc.pid if program.proc else '?'}) exited "
                    f"with {how}; restarting in {wait:g} s ({deaths} death(s) within "
                    f"{self.window:g} s)")  # fmt: skip
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), wait)
        if not self._stopping.is_set():
            program.restarts += 1
            await self._start(program)

    async def _start(self, program: Program) -> None:
        program.log.parent.mkdir(parents=True, exist_ok=True)
        with program.log.open("ab") as log:  # appended: a restart keeps the crash's lines
            program.proc = await asyncio.create_subprocess_exec(
                *program.argv, env=program.env, stdout=log, stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the supervisor, which stops us
            )  # fmt: skip
        self.report(f"{program.name}: pid {program.proc.pid} (log {program.log})")

    async def _healthy(self, program: Program) -> bool:
        deadline = time.monotonic() + self.health_timeout
        async with httpx.AsyncClient(timeout=2.0) as client:
            while time.monotonic() < deadline and not self._stopping.is_set():
                assert program.proc is not None
                if program.proc.returncode is not None:
                    return False
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(program.health_url or "")).status_code == 200:
                        return True
                await asyncio.sleep(0.5)
        return False

    async def _stop_all(self) -> None:
        self.stop()
        running = [p.proc for p in self.programs if p.proc and p.proc.returncode is None]
        for proc in running:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        for proc in running:
            try:
                await asyncio.wait_for(proc.wait(), self.stop_timeout)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()


def python_program(
    name: str, module: str, log_dir: Path, health_url: str | None = None, **env: str
) -> Program:
    """`python -m module` with this interpreter and environment (plus `env`)."""
    return Program(
        name, [sys.executable, "-m", module], {**os.environ, **env}, log_dir / f"{name}.log",
        health_url,
    )  # fmt: skip
