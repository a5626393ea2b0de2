"""The `mnemo` CLI: key creation for scripts, and resumable imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from mnemo.cli.importer import ImportState
from mnemo.cli.main import app
from mnemo.core.keyring import KEY_CACHE_SECONDS
from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_keys_create_prints_only_a_usable_key(live_server: LiveServer) -> None:
    project = f"cli-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_DATABASE_URL": str(live_server.settings.database_url),
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_EMBEDDING_DIM": "384",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mnemo.cli.main",
            "keys",
            "create",
            "--project",
            project,
            "--name",
            "ci",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert done.stdout == key + "\n" and key.startswith("mnemo_")
    verify = httpx.get(
        f"{live_server.url}/v1/auth/verify", headers={"Authorization": f"Bearer {key}"}
    )
    assert verify.status_code == 204

    listed = subprocess.run(
        [sys.executable, "-m", "mnemo.cli.main", "keys", "list", "--project", project],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0 and "\tci\t" in listed.stdout
    key_id = listed.stdout.split("\t")[0]
    revoked = subprocess.run(
        [sys.executable, "-m", "mnemo.cli.main", "keys", "revoke", key_id],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert revoked.returncode == 0, revoked.stderr
    # Another process revoked it: the server's key cache lets it go within KEY_CACHE_SECONDS.
    deadline = time.monotonic() + KEY_CACHE_SECONDS + 2
    while True:
        status = httpx.get(
            f"{live_server.url}/v1/auth/verify", headers={"Authorization": f"Bearer {key}"}
        ).status_code
        if status == 401 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status == 401


def _lines(user: str, third_has_user: bool) -> str:
    third = {"text": "I fly kites"} | ({"user_id": user} if third_has_user else {})
    records = [
        {"messages": [{"role": "user", "content": "I bake bread"}], "user_id": user},
        {"content": ["I knit scarves"], "user_id": user.upper()},
        third,
    ]
    return "\n".join(json.dumps(r) for r in records) + "\n"


def test_import_resumes_after_failure(tenant: Tenant, tmp_path: Path) -> None:
    source = tmp_path / "memories.jsonl"
    source.write_text(_lines(tenant.user, third_has_user=False))
    args = ["import", str(source), "--no-progress", "--url", tenant.url, "--api-key", tenant.key]
    runner = CliRunner()

    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output
    state_path = ImportState.path_for(source)
    assert ImportState.load(state_path) == ImportState(acknowledged_lines=2, runs=2)

    source.write_text(_lines(tenant.user, third_has_user=True))
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    assert ImportState.load(state_path) == ImportState(acknowledged_lines=3, runs=3)

    again = runner.invoke(app, args)  # nothing left to do
    assert again.exit_code == 0 and ImportState.load(state_path).runs == 3


def test_add_search_runs_export(tenant: Tenant, tmp_path: Path) -> None:
    runner = CliRunner()
    remote = ["--url", tenant.url, "--api-key", tenant.key]
    added = runner.invoke(
        app, ["add", "I climb volcanoes", "--user", tenant.user, "--wait", "30", *remote]
    )
    assert added.exit_code == 0, added.output
    run = json.loads(added.stdout)
    assert run["status"] == "completed"
    shown = runner.invoke(app, ["runs", run["run_id"], *remote])
    assert json.loads(shown.stdout)["run_id"] == run["run_id"]
    found = runner.invoke(
        app, ["search", "volcanoes", "--user", tenant.user, "--type", "bm25", *remote]
    )
    assert json.loads(found.stdout)[0]["content"] == "User said: I climb volcanoes"
    out = tmp_path / "export.jsonl"
    exported = runner.invoke(app, ["export", "-o", str(out), "--no-progress", *remote])
    assert exported.exit_code == 0, exported.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["header", "group", "memory", "end"]
    assert records[2]["topic"] == "UserKnowledge" and records[2]["user_id"] == tenant.user


def test_an_import_repeated_from_scratch_adds_nothing_twice(
    live_server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    """Each line goes with an Idempotency-Key derived from the file and the line: losing the
    progress file (or an answer lost to a timeout) does not duplicate adds."""
    source = tmp_path / "adds.jsonl"
    source.write_text(_lines(tenant.user, third_has_user=True))
    args = ["import", str(source), "--no-progress", "--url", tenant.url, "--api-key", tenant.key]
    assert CliRunner().invoke(app, args).exit_code == 0
    ImportState.path_for(source).unlink()
    assert CliRunner().invoke(app, args).exit_code == 0
    assert live_server.engine is not None
    runs = live_server.run(live_server.engine.list_runs(tenant.project))
    assert len(runs) == 3


def test_keys_create_makes_read_only_and_user_bound_keys(live_server: LiveServer) -> None:
    """The commands of docs/guides/hardening.md#scoped-credentials."""
    project = f"cli-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_DATABASE_URL": str(live_server.settings.database_url),
        "MNEMO_PROJECT": project,
    }

    def mnemo(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mnemo.cli.main", *args],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    phone = mnemo("keys", "create", "--name", "phone-of-ana", "--user", "Ana")
    dashboard = mnemo("keys", "create", "--name", "dashboard", "--read-only")
    assert phone.returncode == 0 and dashboard.returncode == 0, phone.stderr + dashboard.stderr
    listed = mnemo("keys", "list", "--project", project).stdout.splitlines()
    assert [line.split("\t")[2] for line in listed] == ["phone-of-ana", "dashboard"]
    assert listed[0].endswith("\trw user=ana") and listed[1].endswith("\tro")
    refused = mnemo("keys", "create", "--user", "\u212aate")  # KELVIN SIGN: another id
    assert refused.returncode == 2 and "--user" in refused.stderr

    def call(key: str, path: str, body: dict[str, object]) -> int:
        headers = {"Authorization": f"Bearer {key}"}
        return httpx.post(f"{live_server.url}{path}", json=body, headers=headers).status_code

    add = {"input": {"string": {"content": ["I keep bees"]}}}
    assert call(dashboard.stdout.strip(), "/v1/memories", add) == 403
    assert call(dashboard.stdout.strip(), "/v1/memories/list", {"user_id": "bob"}) == 200
    assert call(phone.stdout.strip(), "/v1/memories/list", {"user_id": "bob"}) == 403
    assert call(phone.stdout.strip(), "/v1/memories", add) == 200
