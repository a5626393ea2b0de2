"""The multiprocess folder `mnemo serve` prepares before prometheus-client is imported."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mnemo.telemetry import multiprocess

ROOT = Path(__file__).resolve().parents[3]


def run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != multiprocess.ENV}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_prepare_makes_a_private_folder_that_children_inherit() -> None:
    done = run(
        "import os, stat, subprocess, sys\n"
        "from mnemo.telemetry import multiprocess\n"
        "folder = multiprocess.prepare()\n"
        "from mnemo import metrics\n"
        "metrics.RUNS.labels(status='completed').inc(2)\n"
        "child = 'from mnemo import metrics; metrics.RUNS.labels(status=\"completed\").inc(3)'\n"
        "subprocess.run([sys.executable, '-c', child], check=True)\n"
        "from prometheus_client import CollectorRegistry, generate_latest\n"
        "from prometheus_client.multiprocess import MultiProcessCollector\n"
        "registry = CollectorRegistry()\n"
        "MultiProcessCollector(registry)\n"
        "print(oct(stat.S_IMODE(folder.stat().st_mode)))\n"
        "print(generate_latest(registry).decode())\n"
        "multiprocess.release(folder)\n"
        "print(folder.exists())\n"
    )
    assert done.returncode == 0, done.stderr
    mode, *text, gone = done.stdout.strip().splitlines()
    assert mode == "0o700"
    assert 'mnemo_runs_total{status="completed"} 5.0' in text
    assert gone == "False"


def test_prepare_refuses_once_prometheus_client_is_loaded() -> None:
    done = run(
        "import prometheus_client\nfrom mnemo.telemetry import multiprocess\nmultiprocess.prepare()"
    )
    assert done.returncode != 0 and "MetricsAlreadyLoaded" in done.stderr


def test_an_operators_folder_is_emptied_of_stale_files_and_kept(tmp_path: Path) -> None:
    (tmp_path / "counter_12345.db").write_bytes(b"stale")
    (tmp_path / "notes.txt").write_text("mine")
    done = run(
        "from mnemo.telemetry import multiprocess\n"
        "folder = multiprocess.prepare()\n"
        "multiprocess.release(folder)\n",
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_folders_of_servers_that_are_gone_are_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    tmp = Path(tempfile.gettempdir())
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = tmp / f"{multiprocess.PREFIX}{dead.pid}-test"
    live = tmp / f"{multiprocess.PREFIX}{os.getpid()}-test"
    for folder in (orphan, live):
        folder.mkdir(exist_ok=True)
    try:
        multiprocess._remove_orphans(tmp)
        assert not orphan.exists() and live.exists()
    finally:
        live.rmdir()
