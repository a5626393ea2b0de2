"""Every runnable example of README.md and docs/**/*.md, run against one live server.

Blocks run in page order, each page in its own working folder (so a later block sees the
files an earlier one wrote), as a user would: `bash` blocks in bash with the `mnemo` CLI on
the PATH and curl failing on any HTTP error status, `python` blocks in a fresh interpreter.
`MNEMO_URL` and `MNEMO_API_KEY` are set as `make run` prints them, and the documented
address http://127.0.0.1:8080 is the live server's. What is not run is listed by
tests/docs/blocks.py's rules.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.docs.blocks import ROOT, Block, runnable_blocks

BLOCKS = runnable_blocks()
DOCUMENTED_URLS = ("http://127.0.0.1:8080", "http://localhost:8080", "localhost:8080")
# curl as the examples call it, but an HTTP error status fails the block (a 422 is a bug)
BASH_PREAMBLE = """set -euo pipefail
curl() { command curl --fail-with-body --show-error --max-time 60 "$@"; }
"""
_folders: dict[Path, Path] = {}


@pytest.fixture(scope="module")
def environment(docs_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    key = docs_server.create_key("default", "docs")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("MNEMO_")}
    env.update(
        MNEMO_URL=docs_server.url,
        MNEMO_API_KEY=key,
        # the CLI's local commands (keys) and EmbeddedClient use the server's database
        MNEMO_DATABASE_URL=str(docs_server.settings.database_url),
        MNEMO_DATA_DIR=str(tmp_path_factory.mktemp("docs-data")),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        HF_HUB_OFFLINE="1",
    )
    return env


def _folder(block: Block, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if block.page not in _folders:
        _folders[block.page] = tmp_path_factory.mktemp("example")
    return _folders[block.page]


def _localised(code: str, url: str) -> str:
    for documented in DOCUMENTED_URLS:
        target = url if documented.startswith("http") else url.removeprefix("http://")
        code = code.replace(documented, target)
    return code


@pytest.mark.integration
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_example_runs(
    block: Block, environment: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    code = _localised(block.code, environment["MNEMO_URL"])
    if block.language == "bash":
        command = ["bash", "-c", BASH_PREAMBLE + code]
    else:
        command = [sys.executable, "-c", code]
    done = subprocess.run(
        command,
        cwd=_folder(block, tmp_path_factory),
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    shown = f"{block.id} ({block.language}) exited {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    print(shown)  # shown with -s, and on failure
    assert done.returncode == 0, shown
    if block.language == "python" and "print(" in code:
        assert done.stdout.strip(), f"{block.id} printed nothing\n{shown}"
