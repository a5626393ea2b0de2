"""The CLI's remote commands start without the engine: importing them (and running `keys`)
loads no torch, no sentence-transformers, no engine or store. Checked in fresh processes,
since this test process has long imported everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.live_server import LiveServer

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence_transformers", "transformers", "sqlalchemy", "fastapi", "uvicorn",
         "mcp", "mcp_types")  # fmt: skip
HEAVY_MNEMO = ("mnemo.core", "mnemo.embedded", "mnemo.store", "mnemo.embeddings", "mnemo.llm")
# What a remote command (add, search, runs, export, import, status) loads once it runs.
REMOTE = ("mnemo.cli.main", "mnemo.client.sync", "mnemo.client.models", "mnemo.client.errors")


def loaded(code: str, env: dict[str, str] | None = None) -> list[str]:
    """Run `code` in a fresh interpreter; the modules it left loaded."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    environment = {**os.environ, "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=environment, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return modules


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY_MNEMO)]


def test_remote_commands_import_no_engine() -> None:
    modules = loaded("\n".join(f"import {m}" for m in REMOTE))
    assert "mnemo.cli.main" in modules and "mnemo.client.sync" in modules
    assert heavy(modules) == []


def test_mcp_stdio_imports_no_engine_nor_fastapi() -> None:
    """`mnemo mcp` needs the MCP SDK and the HTTP client, not the gateway or the engine."""
    modules = loaded("import mnemo.cli.main\nimport mnemo.mcp.stdio")
    assert "mcp.server.mcpserver" in modules
    assert [
        m for m in heavy(modules) if m.split(".")[0] not in ("mcp", "mcp_types", "uvicorn")
    ] == []


def test_help_imports_no_client() -> None:
    modules = loaded(
        "from mnemo.cli.main import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass"
    )
    assert heavy(modules) == [] and "httpx" not in modules


@pytest.mark.integration
def test_keys_use_the_database_not_the_model(live_server: LiveServer) -> None:
    modules = loaded(
        "from mnemo.cli.main import app\n"
        "app(['keys', 'list', '--project', 'nobody'], standalone_mode=False)",
        {"MNEMO_DATABASE_URL": str(live_server.settings.database_url)},
    )
    assert "mnemo.store.keys" in modules  # it did reach the database
    assert [m for m in modules if m.split(".")[0] in ("torch", "sentence_transformers")] == []
    assert not [
        m for m in modules if m.startswith(("mnemo.embedded", "mnemo.embeddings", "mnemo.llm"))
    ]
