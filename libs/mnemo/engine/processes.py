"""Pipeline workers in separate processes (`python -m mnemo.engine`) beside a gateway.

One Python event loop serving HTTP *and* running the pipeline is CPU-bound under load, so
acknowledgements queue behind pipeline work. Worker processes share the database (the
embedded server too: pgserver lets several processes use one data folder) and the bus, and
per-scope order still holds because the bus claims the head of each key across processes.
"""

from __future__ import annotations

import os
import subprocess
import sys

from mnemo.settings import Settings


def spawn_workers(
    settings: Settings, database_url: str, count: int
) -> list[subprocess.Popen[bytes]]:
    """Start `count` worker processes on `database_url` with this process's settings."""
    env = {
        **os.environ,
        "MNEMO_DATABASE_URL": database_url,
        "MNEMO_DATA_DIR": str(settings.data_dir),
        "MNEMO_WORKERS": str(settings.workers),
        "MNEMO_PROJECT": settings.project,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    return [subprocess.Popen([sys.executable, "-m", "mnemo.engine"], env=env) for _ in range(count)]


def stop_workers(processes: list[subprocess.Popen[bytes]], timeout: float = 30.0) -> None:
    """SIGTERM each (they finish their current record's transaction or roll it back), then
    SIGKILL what is left; nothing acknowledged is lost either way."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
