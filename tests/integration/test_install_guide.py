"""docs/guides/install.md's commands, run: the lock workflow for real (on a copy of the
project's files, so the repository's lock is never changed), the install commands as
`make -n` (they would rebuild this very environment)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "install.md"
VENV = ROOT / ".venv"


def commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE.read_text(), re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def project_copy(tmp_path: Path) -> Path:
    for name in ("pyproject.toml", "uv.lock", "Makefile", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "venv.sh", tmp_path / "scripts" / "venv.sh")
    return tmp_path


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    if argv[0] == "make":
        argv += [f"VENV={VENV}"]  # this checkout's environment, wherever the copy is
    elif argv[0].startswith(".venv/"):
        argv[0] = str(ROOT / argv[0])
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(VENV)}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_guide_shows_the_commands_this_test_runs() -> None:
    assert commands() == [
        "make install",
        "make install PYTHON=python3.12",
        "make check-lock",
        ".venv/bin/uv lock --upgrade-package tqdm",
        "make lock",
    ]


def test_the_install_commands_are_make_targets_that_take_python() -> None:
    for command in ("make install", "make install PYTHON=python3.12"):
        done = subprocess.run(
            [*shlex.split(command), "-n", "-B"], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert "uv sync -q --locked --all-extras" in done.stdout
    assert 'PYTHON="python3.12"' in done.stdout


def test_the_lock_workflow_keeps_the_lock_and_pyproject_in_step(tmp_path: Path) -> None:
    done = run("make check-lock", ROOT)  # read-only: here, against this very .venv
    assert done.returncode == 0, (done.stdout, done.stderr)
    project = project_copy(tmp_path)
    lock_before = (project / "uv.lock").read_text()
    for command in (".venv/bin/uv lock --upgrade-package tqdm", "make lock"):
        done = run(command, project)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    locked = tomllib.loads((project / "uv.lock").read_text())
    assert {p["name"] for p in locked["package"]} >= {"mnemo", "tqdm", "compartment"}
    # Only tqdm may have moved.
    before = {p["name"]: p["version"] for p in tomllib.loads(lock_before)["package"]}
    after = {p["name"]: p["version"] for p in locked["package"]}
    assert {n for n in before if before[n] != after.get(n)} <= {"tqdm"}


def test_a_dependency_added_without_make_lock_fails_the_check(tmp_path: Path) -> None:
    project = project_copy(tmp_path)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('  "tqdm>=4.66",\n', '  "tqdm>=4.66",\n  "six",\n')
    )
    done = run("make check-lock", project)
    assert done.returncode != 0
    assert "needs to be updated" in done.stderr
