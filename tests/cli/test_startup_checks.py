"""Start-up checks before it acts: a misspelt variable, a busy port and a data dir with no
database are reported in one line, and nothing is created, no key printed, no process left."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("MNEMO_") and k != "DATABASE_URL"
    }
    return env | {"PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}", **extra}


def _mnemo(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mnemo.cli.main", *args]
    return subprocess.run(
        command, env=_env(**env), capture_output=True, text=True, timeout=180, check=False
    )


@pytest.fixture
def busy_port() -> Iterator[int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_a_misspelt_variable_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data_dir = tmp_path / "never"
    done = _mnemo("serve", "--data-dir", str(data_dir), MNEMO_WORKER="3")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "MNEMO_WORKER (did you mean MNEMO_WORKERS?)" in lines[0]
    assert not data_dir.exists()
    assert done.stdout == ""


def test_a_value_out_of_range_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data_dir = tmp_path / "never"
    done = _mnemo("serve", "--data-dir", str(data_dir), MNEMO_WORKERS="-1")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "workers" in lines[0] and "'-1'" in lines[0], done.stderr
    assert not data_dir.exists()


def test_keys_create_names_the_variable_too(tmp_path: Path) -> None:
    done = _mnemo("keys", "create", "--data-dir", str(tmp_path / "d"), MNEMO_PROJEKT="x")
    assert done.returncode == 2
    assert "MNEMO_PROJEKT (did you mean MNEMO_PROJECT?)" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.integration
def test_a_busy_port_is_reported_before_anything_is_created(tmp_path: Path, busy_port: int) -> None:
    data_dir = tmp_path / "new"
    done = _mnemo("serve", "--port", str(busy_port), "--data-dir", str(data_dir))
    assert done.returncode == 1, done.stderr
    assert f"127.0.0.1:{busy_port}" in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr
    assert not data_dir.exists()  # no data dir, so no database and no key
    assert "mnemo_" not in done.stderr + done.stdout
    assert "listening" not in done.stderr


def test_keys_create_refuses_a_data_dir_without_a_database(tmp_path: Path) -> None:
    mistyped = tmp_path / "mnemo-dta"
    done = _mnemo("keys", "create", "--data-dir", str(mistyped))
    assert done.returncode == 1
    assert done.stdout == ""  # no key
    assert str(mistyped) in done.stderr and "--init" in done.stderr
    assert not mistyped.exists()


def test_keys_list_refuses_it_too(tmp_path: Path) -> None:
    done = _mnemo("keys", "list", "--data-dir", str(tmp_path / "nothing"))
    assert done.returncode == 1 and "--init" in done.stderr
    assert not (tmp_path / "nothing").exists()
