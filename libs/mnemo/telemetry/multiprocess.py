"""Metrics from every process of `mnemo serve`: prometheus-client's multiprocess mode.

The pipeline runs in worker processes that nobody scrapes, so each process writes its
samples to memory-mapped files in one folder and the gateway's `/metrics` merges them
(counters and histograms summed, so they stay monotonic across worker restarts).

prometheus-client picks its value store when it is first imported, from
`PROMETHEUS_MULTIPROC_DIR`; so `mnemo serve` calls `prepare` before anything imports it,
and its worker processes inherit the variable. The folder is private to one server: a fresh
temporary folder (removed at exit; folders left by servers that were killed are removed by
the next one), or the folder the operator set in `PROMETHEUS_MULTIPROC_DIR`, emptied of its
metric files at start (stale files would add an old run's counts).
"""

from __future__ import annotations

import glob
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "PROMETHEUS_MULTIPROC_DIR"
PREFIX = "mnemo-metrics-"


class MetricsAlreadyLoaded(RuntimeError):
    """prometheus-client was imported before the multiprocess folder was set."""


def enabled() -> bool:
    """Whether this process writes (and the gateway merges) multiprocess metric files."""
    return bool(os.environ.get(ENV))


def prepare() -> Path:
    """Set up the folder for this server and its children; returns it. Call it before
    anything imports prometheus_client (the entry point does, first thing)."""
    if "prometheus_client" in sys.modules and not enabled():
        raise MetricsAlreadyLoaded(
            "prometheus_client was imported before mnemo set PROMETHEUS_MULTIPROC_DIR; "
            "the worker processes' metrics would be missing from /metrics"
        )
    given = os.environ.get(ENV)
    if given:
        folder = Path(given)
        folder.mkdir(parents=True, exist_ok=True)
        for stale in glob.glob(str(folder / "*.db")):
            os.remove(stale)
        return folder
    _remove_orphans(Path(tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))  # 0700, fresh
    os.environ[ENV] = str(folder)
    return folder


def release(folder: Path) -> None:
    """Remove the folder `prepare` created (an operator's own folder is kept)."""
    if folder.name.startswith(PREFIX) and folder.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(folder, ignore_errors=True)


def process_exited(pid: int) -> None:
    """Drop the live gauges of a process that exited (its counters stay in the totals)."""
    if not enabled():
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)


def _remove_orphans(tmp: Path) -> None:
    """Remove the folders of servers that are gone (killed before they could clean up)."""
    for folder in tmp.glob(f"{PREFIX}*-*"):
        pid = folder.name[len(PREFIX) :].split("-", 1)[0]
        try:
            if folder.stat().st_uid != os.getuid() or not pid.isdigit() or _alive(int(pid)):
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        log.info("removed the metrics folder %s of a server that is gone", folder)


def _alive(pid: int) -> bool:
    import psutil

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False
