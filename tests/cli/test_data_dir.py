"""The first start in a new data dir creates only the missing folders, privately, and never
loosens an existing parent (run as root, the embedded Postgres used to chmod every parent of
the data dir to 0755)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.postgres import make_traversable_for_postgres

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
AS_ROOT = os.geteuid() == 0


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _keys_create(data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("MNEMO_") and k != "DATABASE_URL"
    }
    env |= {
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_EMBEDDING_DIM": "384",
    }
    command = [
        sys.executable,
        "-m",
        "mnemo.cli.main",
        "keys",
        "create",
        "--init",  # a new data dir: without it, keys create refuses (test_startup_checks.py)
        "--data-dir",
        str(data_dir),
    ]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)


def test_first_start_creates_private_dirs_and_keeps_parents(tmp_path: Path) -> None:
    make_traversable_for_postgres(tmp_path)  # the test's own temp folders
    outer = tmp_path / "outer"
    outer.mkdir()
    outer.chmod(0o710)  # traversable by its group, not readable: nothing may widen it
    data_dir = outer / "a" / "b" / "mnemo"
    done = _keys_create(data_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("mnemo_")
    assert _mode(outer) == 0o710
    for created in (outer / "a", outer / "a" / "b", data_dir):
        # Owner only; as root the embedded Postgres (user `pgserver`) may only traverse.
        assert _mode(created) == (0o710 if AS_ROOT else 0o700), created
    assert _mode(data_dir / "pg") & 0o077 == 0  # Postgres keeps its own folder private


@pytest.mark.skipif(not AS_ROOT, reason="only root hands the data dir to another user")
def test_unreachable_data_dir_is_refused_without_touching_parents(tmp_path: Path) -> None:
    make_traversable_for_postgres(tmp_path)
    private = tmp_path / "private"
    private.mkdir()
    private.chmod(0o700)
    done = _keys_create(private / "mnemo")
    assert done.returncode != 0
    assert str(private) in done.stderr and "pgserver" in done.stderr
    assert _mode(private) == 0o700
    assert not (private / "mnemo").exists()


def test_serve_says_an_unreachable_data_dir_in_one_line(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root's embedded Postgres runs as another user")
    make_traversable_for_postgres(tmp_path)
    private = tmp_path / "private"
    private.mkdir()
    private.chmod(0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env |= {"PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}", "MNEMO_EMBEDDING_PROVIDER": "hash"}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "mnemo.cli.main", "serve", "--port", str(port),
               "--data-dir", str(private / "mnemo")]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("mnemo serve:")]
    assert len(said) == 1 and "pgserver" in said[0], done.stderr
