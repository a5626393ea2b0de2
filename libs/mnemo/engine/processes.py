"""Pipeline workers in separate processes (`python -m mnemo.engine`) beside a gateway.

One Python event loop serving HTTP *and* running the pipeline is CPU-bound under load, so
acknowledgements queue behind pipeline work. Worker processes share the database (the
embedded server too: pgserver lets several processes use one data folder) and the bus, and
per-scope order still holds because the bus claims the head of each key across processes.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mnemo.settings import Settings


@dataclass
class WorkerProcesses:
    processes: list[subprocess.Popen[bytes]]
    ready_files: list[Path]

    async def wait_ready(self, timeout: float = 300.0) -> None:
        """Return once every worker has started (its model loaded); raise if one exits
        first or `timeout` passes. Load arriving before that would only queue."""
        deadline = time.monotonic() + timeout
        while not all(f.exists() for f in self.ready_files):
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"worker process exited with code {process.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"worker processes not ready after {timeout:.0f} s")
            await asyncio.sleep(0.1)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM each (they finish their current record's transaction or roll it back),
        then SIGKILL what is left; nothing acknowledged is lost either way."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for ready in self.ready_files:
            ready.unlink(missing_ok=True)


def spawn_workers(settings: Settings, database_url: str, count: int) -> WorkerProcesses:
    """Start `count` worker processes on `database_url` with this process's settings."""
    ready_dir = Path(tempfile.mkdtemp(prefix="mnemo-workers-"))
    env = {
        **os.environ,
        "MNEMO_DATABASE_URL": database_url,
        "MNEMO_DATA_DIR": str(settings.data_dir),
        "MNEMO_WORKERS": str(settings.workers),
        "MNEMO_PROJECT": settings.project,
        "MNEMO_WORKER_PARENT_PID": str(os.getpid()),
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    ready_files = [ready_dir / f"worker-{i}.ready" for i in range(count)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "mnemo.engine"],
            env={**env, "MNEMO_WORKER_READY_FILE": str(ready)},
        )
        for ready in ready_files
    ]
    return WorkerProcesses(processes, ready_files)
