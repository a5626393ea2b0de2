"""`python -m mnemo.embedded`: pipeline workers only (no HTTP), e.g. more worker processes
beside `mnemo serve` on the same database. Stops cleanly on SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path

from mnemo.core.engine import Engine
from mnemo.core.heartbeat import making_progress
from mnemo.embedded.startup import start_engine
from mnemo.embedded.transport import EmbeddedTransport
from mnemo.embeddings.factory import embedder_from_settings
from mnemo.heap import settle_heap
from mnemo.logs import configure_logging
from mnemo.settings import Settings
from mnemo.tracing.setup import configure as configure_tracing


async def run_workers(settings: Settings) -> None:
    if settings.worker_nice:
        # Pipeline work is throughput work; acknowledgements and searches in the server
        # process are latency work. Under CPU contention the kernel now favours the latter.
        os.nice(settings.worker_nice)
    # This process answers no request: the local model may run on its event loop.
    engine = await start_engine(
        settings, embedder=embedder_from_settings(settings, on_event_loop=True)
    )
    settle_heap()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    logging.getLogger(__name__).info("mnemo workers running (%d)", settings.workers)
    if settings.worker_ready_file is not None:
        settings.worker_ready_file.write_text(str(os.getpid()))
    tasks = []
    if settings.worker_parent_pid is not None:
        tasks.append(asyncio.create_task(_stop_when_orphaned(settings.worker_parent_pid, stop)))
    if settings.worker_ready_file is not None:
        tasks.append(asyncio.create_task(_show_progress(settings.worker_ready_file, engine)))
    try:
        await stop.wait()
    finally:
        for task in tasks:
            task.cancel()
        await engine.close()


async def _show_progress(ready_file: Path, engine: Engine) -> None:
    """Refresh the ready file's mtime every heartbeat while the pipeline makes progress: the
    supervisor's sign of life (`mnemo.core.heartbeat`), independent of the database."""
    s = engine.settings
    pool = engine.transport.workers if isinstance(engine.transport, EmbeddedTransport) else None
    while True:
        busy = pool.longest_busy_seconds() if pool is not None else 0.0
        if making_progress(busy, s.run_time_budget_seconds, s.worker_stall_seconds):
            with contextlib.suppress(OSError):
                os.utime(ready_file)
        await asyncio.sleep(s.heartbeat_seconds)


async def _stop_when_orphaned(parent_pid: int, stop: asyncio.Event) -> None:
    """A server that dies without stopping its workers (SIGKILL, OOM) must not leave them
    running on: once re-parented, stop."""
    while os.getppid() == parent_pid:  # noqa: ASYNC110 - nothing to wait on but time
        await asyncio.sleep(1.0)
    logging.getLogger(__name__).warning("parent process %d is gone; stopping", parent_pid)
    stop.set()


def main() -> None:
    configure_logging()
    settings = Settings()
    configure_tracing("mnemo-worker")
    asyncio.run(run_workers(settings))


if __name__ == "__main__":
    main()
