"""`mnemo export`, `mnemo import --memories` and `mnemo import --from-engram` between two live
mnemo servers (the second standing in for Engram in the last case): lossless, resumable,
and honest about Engram's 100-per-call cap."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mnemo.cli import restore as restore_module
from mnemo.cli.main import app
from mnemo.cli.restore import RestoreState
from mnemo.cli.transfer_http import TransferClient
from mnemo.client import MnemoClient, PreExtractedInput
from mnemo.client.errors import MnemoConnectionError
from mnemo.domain.scope import bounded_memory_id
from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project, comparable

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def target(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path_factory: Any
) -> Iterator[LiveServer]:
    settings = gateway_settings(
        postgres.new_database("target"), Path(tmp_path_factory.mktemp("target"))
    )
    server = LiveServer(settings, llm_server).start()
    yield server
    server.stop()


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _cli(*args: str) -> Any:
    result = CliRunner().invoke(app, [*args, "--no-progress"])
    return result


def test_export_then_import_is_lossless(
    live_server: LiveServer, target: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    assert live_server.engine is not None
    live_server.run(build_project(live_server.engine, tenant.project))
    first = tmp_path / "export.jsonl"
    done = _cli("export", "-o", str(first), "--url", tenant.url, "--api-key", tenant.key)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stderr.splitlines()[-1]) == {"exported": 7, "file": str(first)}
    target_key = target.create_key(tenant.project)
    done = _cli("import", "--memories", str(first), "--url", target.url, "--api-key", target_key)
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stderr.splitlines()[-1])
    assert summary["imported"] == 7 and summary["groups"] == 2
    assert summary["embeddings_kept"] == 7
    second = tmp_path / "again.jsonl"
    done = _cli("export", "-o", str(second), "--url", target.url, "--api-key", target_key)
    assert done.exit_code == 0, done.output
    assert comparable(_records(second)) == comparable(_records(first))


def test_an_interrupted_export_resumes_where_it_stopped(
    live_server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    assert live_server.engine is not None
    live_server.run(build_project(live_server.engine, tenant.project))
    remote = ("--url", tenant.url, "--api-key", tenant.key)
    whole = tmp_path / "whole.jsonl"
    assert _cli("export", "-o", str(whole), *remote).exit_code == 0
    lines = whole.read_text("utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    # Header, 2 groups, 3 memories, and half of the fourth: where a crash left it.
    cut.write_text("".join(lines[:6]) + lines[6][: len(lines[6]) // 2], "utf-8")
    done = _cli("export", "-o", str(cut), *remote)
    assert done.exit_code == 0, done.output
    assert comparable(_records(cut)) == comparable(_records(whole))
    assert _records(cut)[-1] == {"kind": "end", "memories": 7, "skipped": []}
    again = _cli("export", "-o", str(cut), *remote)
    assert again.exit_code == 0 and "already holds a complete export" in again.stderr


def test_an_interrupted_import_resumes(
    live_server: LiveServer,
    target: LiveServer,
    tenant: Tenant,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert live_server.engine is not None
    live_server.run(build_project(live_server.engine, tenant.project))
    export = tmp_path / "export.jsonl"
    assert _cli("export", "-o", str(export), "--url", tenant.url, "--api-key", tenant.key).exit_code == 0  # fmt: skip
    target_key = target.create_key(tenant.project)
    monkeypatch.setattr(restore_module, "BATCH_BYTES", 1)  # one memory per request
    calls = {"n": 0}
    real = TransferClient.import_batch

    def flaky(self: TransferClient, body: dict[str, Any]) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 5:  # two groups, two memories, then the network goes
            raise MnemoConnectionError("connection reset")
        return real(self, body)

    monkeypatch.setattr(TransferClient, "import_batch", flaky)
    args = ("import", "--memories", str(export), "--url", target.url, "--api-key", target_key)
    stopped = _cli(*args)
    assert stopped.exit_code == 1 and "re-run to resume" in stopped.stderr
    state = RestoreState.load(RestoreState.path_for(export))
    assert state.imported == 2 and state.acknowledged_lines == 5
    done = _cli(*args)
    assert done.exit_code == 0, done.output
    assert calls["n"] == 5 + 5  # the five memories left, one request each
    assert json.loads(done.stderr.splitlines()[-1])["imported"] == 7
    again = tmp_path / "again.jsonl"
    assert _cli("export", "-o", str(again), "--url", target.url, "--api-key", target_key).exit_code == 0  # fmt: skip
    assert comparable(_records(again)) == comparable(_records(export))


CRM = {
    "topics": [{"name": "Account", "description": "Facts about customer accounts.",
                "scoping": {"user_scoped": False}}],
    "pipeline": {"steps": [
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"}]},
}  # fmt: skip


def _seed_engram(tenant: Tenant) -> dict[str, Any]:
    """The stand-in Engram project: 101 notes of u1 (over the cap), 2 of u2, u1's profile,
    and a shared topic in a second group. Returns what its list answers, per scope."""
    with MnemoClient(base_url=tenant.url, api_key=tenant.key) as engram:
        engram.groups.put("crm", CRM)
        adds = [
            (("UserKnowledge", [f"u1 fact {i}" for i in range(101)]), "u1", None),
            (("UserKnowledge", ["u2 likes tea", "u2 runs"]), "u2", None),
            (("UserProfile", ["u1 is a pilot."]), "u1", None),
            (("Account", ["Acme renews in May."]), None, "crm"),
        ]
        for (topic, contents), user, group in adds:
            items = [{"topic": topic, "content": c} for c in contents]
            facts = PreExtractedInput.model_validate({"items": items})
            run = engram.memories.add(facts, user_id=user, group=group)
            assert engram.runs.wait(run.run_id, timeout=60).status == "completed"
        return {
            "u1": engram.memories.list(topics=["UserKnowledge"], user_id="u1", limit=100),
            "profile": engram.memories.list(topics=["UserProfile"], user_id="u1", limit=100),
        }


def test_pull_from_a_mnemo_standing_in_for_engram_reads_past_the_cap(
    target: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    seen = _seed_engram(tenant)
    users = tmp_path / "users.txt"
    users.write_text("# developers\nu1\nu2\n\nu3\n", "utf-8")
    moved = f"{tenant.project}-moved"
    target_key = target.create_key(moved)
    report = tmp_path / "report.json"
    args = ("import", "--from-engram", tenant.url, "--key", tenant.key, "--users", str(users),
            "--url", target.url, "--api-key", target_key, "--report", str(report),
            "--state", str(tmp_path / "state.json"))  # fmt: skip
    done = _cli(*args)
    assert done.exit_code == 0, done.output
    summary = json.loads(report.read_text("utf-8"))
    assert summary["incomplete_scopes"] == [] and summary["new"] == 101 + 2 + 1 + 1
    [u1] = [s for s in summary["scopes"] if s["scope"] == "default/UserKnowledge/u1"]
    assert u1["read"] == 101 and u1["how"] == ["list", "search"] and u1["saturated"]
    assert summary["groups_changed"] == {"crm": ["Account"]}
    assert len(summary["scopes"]) == 2 * 3 + 1  # two user-scoped topics x three users, one shared
    with MnemoClient(base_url=target.url, api_key=target_key) as mnemo:
        mine = mnemo.memories.list(topics=["UserKnowledge"], user_id="u1", limit=100)
        assert mine.total == 101  # mnemo's total counts past the page: all 101 arrived
        fields = ("id", "content", "created_at", "updated_at", "user_id", "event_time")
        for seen_memory in seen["u1"]:  # equal times: which 100 a page shows may differ
            here = mnemo.memories.get(seen_memory.id, user_id="u1")
            assert [getattr(here, f) for f in fields] == [getattr(seen_memory, f) for f in fields]
        [profile] = mnemo.memories.list(topics=["UserProfile"], user_id="u1")
        assert profile.content == "u1 is a pilot."
        assert profile.id == seen["profile"][0].id  # a bounded memory keeps Engram's id
        assert profile.id != bounded_memory_id(moved, "default", "UserProfile", {"user_id": "u1"})
        [account] = mnemo.memories.list(group="crm")
        assert account.content == "Acme renews in May."
        # A later write of the bounded topic updates the imported profile in place.
        newer = [{"topic": "UserProfile", "content": "u1 flies gliders."}]
        run = mnemo.memories.add(PreExtractedInput.model_validate({"items": newer}), user_id="u1")
        assert mnemo.runs.wait(run.run_id, timeout=60).status == "completed"
        [profile] = mnemo.memories.list(topics=["UserProfile"], user_id="u1")
        assert (
            profile.content == "u1 flies gliders."
            and len(mnemo.memories.history(profile.id, user_id="u1")) == 1
        )
        assert profile.id == seen["profile"][0].id  # updated in place, under Engram's id
    again = _cli(*args)  # re-running brings nothing twice
    assert again.exit_code == 0
    with MnemoClient(base_url=target.url, api_key=target_key) as mnemo:
        assert mnemo.memories.list(user_id="u2", limit=100).total == 2
