"""Pipeline workers in separate processes (`python -m mnemo.embedded`) beside a gateway.

One Python event loop serving HTTP *and* running the pipeline is CPU-bound under load, so
acknowledgements queue behind pipeline work. Worker processes share the database (the
embedded server too: pgserver lets several processes use one data folder) and the bus, and
per-scope order still holds because the bus claims the head of each key across processes.

The server supervises them. A worker that exits is reaped at once, logged, and replaced
after a backoff (0.5 s, doubling up to 30 s, back to 0.5 s once a worker has lived a
minute). Five deaths within a minute mean a restart will not help (a broken install, a
database that refuses us): the supervisor gives up and the server exits with an error.
Whatever a worker was doing when it died is rolled back and done again by its successor.
A worker that shows no progress for MNEMO_WORKER_STALL_SECONDS (stopped, deadlocked) is
killed and replaced the same way (`mnemo.core.heartbeat`); /readyz names it meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mnemo.core.failures import Backoff
from mnemo.core.heartbeat import is_hung
from mnemo.core.readiness import Check
from mnemo.settings import Settings
from mnemo.store.database import process_alive
from mnemo.telemetry import multiprocess

log = logging.getLogger(__name__)

MAX_DEATHS = 5
DEATH_WINDOW_SECONDS = 60.0
STABLE_AFTER_SECONDS = 60.0
POLL_SECONDS = 0.2
WORKER_COMMAND = (sys.executable, "-m", "mnemo.embedded")


@dataclass
class _Slot:
    """One worker position: the process filling it now, or when the next one starts."""

    index: int
    process: subprocess.Popen[bytes] | None = None
    ready_file: Path | None = None
    started_at: float = 0.0
    restart_at: float | None = None
    generation: int = 0

    @property
    def ready(self) -> bool:
        return (
            self.process is not None
            and not exited(self.process)
            and self.ready_file is not None
            and self.ready_file.exists()
        )


def exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether `process` has exited. A killed process is a zombie at once, but the kernel
    lets its parent reap it only once all its threads are torn down, which can take a
    while: ask the process table too, so a dead worker never counts as alive."""
    return process.poll() is not None or not process_alive(process.pid)


class WorkerProcesses:
    """`count` supervised worker processes on `database_url` with the server's settings."""

    def __init__(
        self,
        settings: Settings,
        database_url: str,
        count: int,
        clock: Callable[[], float] = time.monotonic,
        command: Sequence[str] = WORKER_COMMAND,
    ) -> None:
        self.settings = settings
        self.database_url = database_url
        self.clock = clock
        self.command = list(command)
        self.host = socket.gethostname()
        self.failure: str | None = None  # set once the supervisor gives up
        self.restarts = 0
        self._slots = [_Slot(i) for i in range(count)]
        self._backoff = [Backoff(0.5, 30.0) for _ in range(count)]
        self._deaths: deque[float] = deque(maxlen=MAX_DEATHS)
        self._dead_pids: deque[int] = deque(maxlen=256)
        self._unreaped: list[subprocess.Popen[bytes]] = []
        self._ready_dir = Path(tempfile.mkdtemp(prefix="mnemo-workers-"))

    @property
    def processes(self) -> list[subprocess.Popen[bytes]]:
        """The current process of each slot that has one."""
        return [s.process for s in self._slots if s.process is not None]

    @property
    def ready_files(self) -> list[Path]:
        return [s.ready_file for s in self._slots if s.ready_file is not None]

    def start(self) -> WorkerProcesses:
        for slot in self._slots:
            self._spawn(slot)
        return self

    async def wait_ready(self, timeout: float = 300.0) -> None:
        """Return once every worker has started (its model loaded), restarting any that
        die meanwhile; raise if the supervisor gives up or `timeout` passes. Load arriving
        before that would only queue."""
        deadline = time.monotonic() + timeout
        while not all(s.ready for s in self._slots):
            self.tick()
            if self.failure is not None:
                raise RuntimeError(self.failure)
            if time.monotonic() > deadline:
                raise TimeoutError(f"worker processes not ready after {timeout:.0f} s")
            await asyncio.sleep(0.1)

    async def supervise(self, on_failure: Callable[[str], None]) -> None:
        """Reap and restart until cancelled; on giving up, call `on_failure(reason)`."""
        while self.failure is None:
            self.tick()
            await asyncio.sleep(POLL_SECONDS)
        on_failure(self.failure)

    def tick(self) -> None:
        """Kill hung workers, reap dead ones and start the replacements that are due."""
        self.kill_hung()
        self.reap()
        now = self.clock()
        for slot in self._slots:
            if slot.restart_at is not None and now >= slot.restart_at and self.failure is None:
                self.restarts += 1
                self._spawn(slot)

    def reap(self) -> None:
        """Notice workers that exited and plan their restart; reap the dead (no zombies)."""
        for reaped in [p for p in self._unreaped if p.poll() is not None]:
            self._unreaped.remove(reaped)
            log.warning("worker process %d %s", reaped.pid, _exit_text(reaped.returncode))
        now = self.clock()
        for slot in self._slots:
            process = slot.process
            if process is None or not exited(process):
                continue
            self._dead_pids.append(process.pid)
            multiprocess.process_exited(process.pid)
            if process.poll() is None:
                self._unreaped.append(process)  # reaped on a later look
            slot.process = None
            self._deaths.append(now)
            backoff = self._backoff[slot.index]
            if now - slot.started_at >= STABLE_AFTER_SECONDS:
                backoff.reset()
            if len(self._deaths) == MAX_DEATHS and now - self._deaths[0] <= DEATH_WINDOW_SECONDS:
                self.failure = (
                    f"worker processes died {MAX_DEATHS} times within "
                    f"{DEATH_WINDOW_SECONDS:.0f} s (last: pid {process.pid}, "
                    f"{_exit_text(process.returncode)}); giving up"
                )
                log.error("%s", self.failure)
                continue
            slot.restart_at = now + backoff.next()
            log.error(
                "worker process %d (slot %d) %s; restarting it in %.1f s",
                process.pid, slot.index, _exit_text(process.returncode),
                slot.restart_at - now,
            )  # fmt: skip

    def silent(self) -> list[tuple[_Slot, float]]:
        """Each running worker with how long ago it last showed progress (seconds)."""
        now = time.time()
        found = []
        for slot in self._slots:
            if slot.process is None or slot.ready_file is None or exited(slot.process):
                continue
            try:
                found.append((slot, now - slot.ready_file.stat().st_mtime))
            except FileNotFoundError:
                continue  # still starting: wait_ready's business
        return found

    def kill_hung(self) -> None:
        """SIGKILL workers silent past MNEMO_WORKER_STALL_SECONDS (even a stopped process
        dies of it); `reap` then replaces them. Their open transactions roll back, so the
        records they held are taken by the others."""
        for slot, silent in self.silent():
            if is_hung(silent, self.settings.worker_stall_seconds) and slot.process is not None:
                log.error(
                    "worker process %d (slot %d) showed no progress for %.0f s; killing it",
                    slot.process.pid, slot.index, silent,
                )  # fmt: skip
                slot.process.kill()

    def alive(self, host: str, pid: int) -> bool | None:
        """Whether `pid` on `host` is one of our workers and alive; None if not ours."""
        if host != self.host:
            return None
        if any(s.process is not None and s.process.pid == pid for s in self._slots):
            return True
        return False if pid in self._dead_pids else None

    def check(self) -> Check:
        ready = sum(1 for s in self._slots if s.ready)
        detail = f"{ready} of {len(self._slots)} running (restarts: {self.restarts})"
        if self.failure is not None:
            return Check("worker_processes", False, self.failure)
        quiet = [
            f"worker process {slot.process.pid} (slot {slot.index}) silent for {silent:.0f} s"
            for slot, silent in self.silent()
            if silent > self.settings.heartbeat_timeout_seconds and slot.process is not None
        ]
        if quiet:
            limit = self.settings.worker_stall_seconds
            return Check(
                "worker_processes",
                False,
                f"{'; '.join(quiet)} (replaced once silent for {limit:.0f} s); {detail}",
            )
        return Check("worker_processes", ready > 0, detail)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM each (they finish their current record's transaction or roll it back),
        then SIGKILL what is left; nothing acknowledged is lost either way."""
        live = self.processes + self._unreaped
        for slot in self._slots:
            slot.restart_at = None
        for process in live:
            if process.poll() is None:
                process.terminate()
        for process in live:
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            multiprocess.process_exited(process.pid)
        shutil.rmtree(self._ready_dir, ignore_errors=True)

    def _spawn(self, slot: _Slot) -> None:
        slot.generation += 1
        slot.ready_file = self._ready_dir / f"worker-{slot.index}-{slot.generation}.ready"
        slot.process = subprocess.Popen(
            self.command,
            env={**self._env(), "MNEMO_WORKER_READY_FILE": str(slot.ready_file)},
        )
        slot.started_at = self.clock()
        slot.restart_at = None

    def _env(self) -> dict[str, str]:
        s = self.settings
        return {
            **os.environ,
            "MNEMO_DATABASE_URL": self.database_url,
            "MNEMO_DATA_DIR": str(s.data_dir),
            "MNEMO_WORKERS": str(s.workers),
            "MNEMO_PROJECT": s.project,
            "MNEMO_WORKER_PARENT_PID": str(os.getpid()),
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }


def _exit_text(code: int | None) -> str:
    if code is None:
        return "has exited"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def spawn_workers(settings: Settings, database_url: str, count: int) -> WorkerProcesses:
    """Start `count` supervised worker processes on `database_url` with these settings."""
    return WorkerProcesses(settings, database_url, count).start()
