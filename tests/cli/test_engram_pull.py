"""`mnemo import --from-engram` against the Engram stand-in (tests/support/engram_standin.py)
and a live mnemo: every memory of scopes far above Engram's 100-per-list cap arrives
intact; a scope search cannot reach is reported incomplete with its own exit code; a
re-run adds nothing; a topic scoped differently here stops the pull before it writes."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from mnemo.cli.engram.pull import EXIT_INCOMPLETE
from mnemo.cli.main import app
from tests.api.live_server import LiveServer, gateway_settings
from tests.support.engram_standin import EngramStandin, StandinMemory, topic
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

SUBJECTS = ["the user", "their manager", "the cat", "a neighbour", "the sister", "the team"]
VERBS = ["prefers", "dislikes", "bought", "repaired", "painted", "booked", "planned", "sold"]
THINGS = ["kayak", "piano", "bicycle", "garden", "laptop", "tent", "violin", "camera",
          "canoe", "sofa", "drone", "lamp", "kettle", "ladder", "mirror", "rug"]  # fmt: skip
PLACES = ["Lisbon", "Oslo", "Kyoto", "Quito", "Perth", "Tunis", "Hanoi", "Lima", "Riga"]
SEASONS = ["in spring", "in winter", "last autumn", "every summer", "on weekends"]


def sentence(rng: random.Random, tag: str) -> str:
    return (f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} a {rng.choice(THINGS)} near "
            f"{rng.choice(PLACES)} {rng.choice(SEASONS)} ({tag})")  # fmt: skip


GROUPS = {
    "default": [
        topic("UserKnowledge"),
        topic("SessionHistory", properties=("conversation_id",)),
        topic("ConversationSummary", properties=("conversation_id",), bounded=True),
    ],
    "plugins": [topic("Processes", user_scoped=False, properties=("repo_name",)),
                topic("RepoProfile", user_scoped=False, properties=("repo_name",),
                      bounded=True)],
}  # fmt: skip


def fill(standin: EngramStandin, rng: random.Random) -> None:
    """u1: 320 notes and 260 session memories in 26 conversations; u2: 40 notes; the
    plugins' Processes: 230 over three repositories (one of 150); u3 is in no users file
    but a Process carries its id, and it has 7 notes. Bounded: u1's 26 ConversationSummary
    memories (one per conversation) and the three repositories' RepoProfile."""
    start = datetime(2026, 3, 1, tzinfo=UTC)
    clock = iter(start + timedelta(minutes=7 * i) for i in range(10_000))

    def add(topic_name: str, tag: str, **kw: Any) -> None:
        created = next(clock)
        standin.add(StandinMemory(sentence(rng, tag), topic_name, created,
                                  updated_at=created + timedelta(hours=rng.randint(0, 30)),
                                  **kw))  # fmt: skip

    for i in range(320):
        add("UserKnowledge", f"note {i}", user_id="u1")
    for i in range(40):
        add("UserKnowledge", f"note {i}", user_id="U2")
    for i in range(260):
        add("SessionHistory", f"turn {i}", user_id="u1",
            properties={"conversation_id": f"c{i % 26}"})  # fmt: skip
    for i, repo in enumerate(["mnemo"] * 150 + ["docs"] * 60 + ["infra"] * 20):
        add("Processes", f"step {i}", group="plugins", properties={"repo_name": repo},
            user_id="u3" if i == 5 else None)  # fmt: skip
    for i in range(7):
        add("UserKnowledge", f"note {i}", user_id="u3")
    # Bounded topics: one memory per scope, which keeps Engram's id here too.
    for i in range(26):
        add("ConversationSummary", f"summary {i}", user_id="u1",
            properties={"conversation_id": f"c{i}"})  # fmt: skip
    for repo in ("mnemo", "docs", "infra"):
        add("RepoProfile", f"profile of {repo}", group="plugins", properties={"repo_name": repo})


@pytest.fixture
def target(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path_factory: Any
) -> Iterator[LiveServer]:
    settings = gateway_settings(
        postgres.new_database("engram_target"), Path(tmp_path_factory.mktemp("target"))
    )
    server = LiveServer(settings, llm_server).start()
    yield server
    server.stop()


@pytest.fixture
def standin() -> Iterator[EngramStandin]:
    server = EngramStandin(GROUPS).start()
    yield server
    server.stop()


def _cli(*args: str, progress: bool = False) -> Any:
    return CliRunner().invoke(app, [*args, "--progress" if progress else "--no-progress"])


def _exported(target: LiveServer, key: str) -> dict[str, dict[str, Any]]:
    response = httpx.get(f"{target.url}/v1/export", params={"vectors": "false"},
                         headers={"Authorization": f"Bearer {key}"}, timeout=60)  # fmt: skip
    lines = [json.loads(line) for line in response.text.splitlines()]
    return {m["id"]: m for m in lines if m["kind"] == "memory"}


def _same_time(a: str, b: str) -> bool:
    return datetime.fromisoformat(a) == datetime.fromisoformat(b)


def test_pull_reads_every_memory_past_the_cap_and_a_second_run_adds_nothing(
    standin: EngramStandin, target: LiveServer, tmp_path: Path
) -> None:
    fill(standin, random.Random(7))
    users = tmp_path / "users.txt"
    users.write_text("# from the plugins' config\nu1\nu2\n", "utf-8")
    key = target.create_key("moved")
    report = tmp_path / "report.json"
    args = ("import", "--from-engram", standin.url, "--key", standin.key, "--users", str(users),
            "--url", target.url, "--api-key", key, "--report", str(report),
            "--state", str(tmp_path / "state.json"))  # fmt: skip
    done = _cli(*args)
    assert done.exit_code == 0, done.output
    summary = json.loads(report.read_text("utf-8"))
    assert summary["complete"] and summary["incomplete_scopes"] == []
    assert sorted(u.lower() for u in summary["users"]) == ["u1", "u2", "u3"]
    scopes = {s["scope"]: s for s in summary["scopes"]}
    assert scopes["default/UserKnowledge/u1"]["read"] == 320
    assert scopes["default/UserKnowledge/u1"]["how"] == ["list", "search"]
    assert scopes["default/SessionHistory/u1"]["how"] == ["list", "partitions", "search"]
    assert scopes["plugins/Processes/-"]["partitions"] == 3
    assert scopes["plugins/Processes/-"]["partitions_capped"] == 1
    assert all(s["saturated"] and s["may_remain"] in (None, 0) for s in scopes.values())
    assert summary["read"] == len(standin.memories) == summary["new"]
    assert "complete: every scope was read to saturation" in done.stderr

    held = _exported(target, key)
    assert len(held) == len(standin.memories)
    bounded = [m for m in standin.memories if m.topic in ("ConversationSummary", "RepoProfile")]
    assert len(bounded) == 26 + 3 and summary["rekeyed_bounded"] == 0
    for memory in standin.memories:  # ids (bounded too), content, scope and times intact
        mine = held[memory.id]
        assert (mine["content"], mine["topic"], mine["group"], mine["properties"]) == (
            memory.content, memory.topic, memory.group, memory.properties)  # fmt: skip
        assert (mine["user_id"] or "").lower() == (memory.user_id or "").lower()
        assert _same_time(mine["created_at"], memory.created_at.isoformat())
        assert _same_time(mine["updated_at"], (memory.updated_at or memory.created_at).isoformat())
    # mnemo's default group keeps its own topics, and gained Engram's SessionHistory.
    config = httpx.get(f"{target.url}/v1/groups/default",
                       headers={"Authorization": f"Bearer {key}"}).json()  # fmt: skip
    names = [t["name"] for t in config["topics"]]
    assert {"UserProfile", "UserKnowledge", "SessionHistory", "ConversationSummary"} <= set(names)
    assert summary["groups_changed"]["default"] == ["SessionHistory", "ConversationSummary"]

    again = _cli(*args)
    assert again.exit_code == 0, again.output
    second = json.loads(report.read_text("utf-8"))
    assert second["new"] == 0 and second["already_here"] == len(standin.memories)
    assert "nothing new: this mnemo already had every memory read" in again.stderr
    assert len(_exported(target, key)) == len(standin.memories)


def test_a_scope_search_cannot_reach_is_reported_incomplete(
    standin: EngramStandin, target: LiveServer, tmp_path: Path
) -> None:
    rng = random.Random(11)
    start = datetime(2026, 5, 1, tzinfo=UTC)
    for i in range(250):  # every third memory is one search never returns
        standin.add(StandinMemory(sentence(rng, f"n{i}"), "UserKnowledge",
                                  start + timedelta(minutes=i), user_id="u1",
                                  searchable=i % 3 != 0))  # fmt: skip
    for i in range(30):
        standin.add(StandinMemory(sentence(rng, f"m{i}"), "UserKnowledge",
                                  start + timedelta(minutes=i), user_id="u2"))  # fmt: skip
    users = tmp_path / "users.txt"
    users.write_text("u1\nu2\n", "utf-8")
    report = tmp_path / "report.json"
    state = tmp_path / "state.json"
    done = _cli("import", "--from-engram", standin.url, "--key", standin.key,
                "--users", str(users), "--url", target.url,
                "--api-key", target.create_key("partial"), "--report", str(report),
                "--state", str(state))  # fmt: skip
    assert done.exit_code == EXIT_INCOMPLETE, done.output
    summary = json.loads(report.read_text("utf-8"))
    assert summary["incomplete_scopes"] == ["default/UserKnowledge/u1"]
    [scope] = [s for s in summary["scopes"] if s["scope"] == "default/UserKnowledge/u1"]
    reachable = sum(1 for i in range(250) if i % 3 != 0 or i >= 150)  # searchable, or listed
    assert scope["read"] == reachable < 250 and not scope["saturated"]
    assert scope["estimated_total"] > scope["read"] and scope["may_remain"] > 0
    assert (
        "INCOMPLETE: 1 scopes may hold memories that were not read: "
        "default/UserKnowledge/u1" in done.stderr
    )
    # Saturated scopes are done; the state keeps them, so a re-run reads only the other.
    kept = json.loads(state.read_text("utf-8"))["done"]
    assert "default/UserKnowledge/u2" in kept and "default/UserKnowledge/u1" not in kept


def test_a_topic_scoped_differently_stops_the_pull_before_anything_is_written(
    standin: EngramStandin, target: LiveServer, tmp_path: Path
) -> None:
    standin.groups["default"]["topics"].append(topic("UserProfile", user_scoped=False))
    standin.add(StandinMemory("Acme", "UserKnowledge", datetime.now(UTC), user_id="u1"))
    key = target.create_key("clash")
    args = ("import", "--from-engram", standin.url, "--key", standin.key,
            "--url", target.url, "--api-key", key, "--state", str(tmp_path / "s.json"))  # fmt: skip
    users = tmp_path / "users.txt"
    users.write_text("u1\n", "utf-8")
    done = _cli(*args, "--users", str(users))
    assert done.exit_code == 2, done.output
    assert "topic 'UserProfile' of group 'default' is scoped differently here" in done.stderr
    assert _exported(target, key) == {}
    # Into a group of its own, the same pull goes through.
    moved = _cli(*args, "--users", str(users), "--group-map", "default=from-engram")
    assert moved.exit_code == 0, moved.output
    [memory] = _exported(target, key).values()
    assert memory["group"] == "from-engram" and memory["content"] == "Acme"


def test_a_dry_run_counts_without_writing_and_429s_are_waited_out(
    standin: EngramStandin, target: LiveServer, tmp_path: Path
) -> None:
    fill(standin, random.Random(3))
    standin.fail_next = [(429, 0.05), (503, None), (429, 0.01)]
    users = tmp_path / "users.txt"
    users.write_text("u1\nu2\n", "utf-8")
    key = target.create_key("dry")
    report = tmp_path / "dry.json"
    done = _cli("import", "--from-engram", standin.url, "--key", standin.key,
                "--users", str(users), "--url", target.url, "--api-key", key,
                "--dry-run", "--report", str(report), "--rate", "500",
                "--concurrency", "2", progress=True)  # fmt: skip
    assert done.exit_code == 0, done.output
    summary = json.loads(report.read_text("utf-8"))
    assert summary["dry_run"] and summary["read"] == len(standin.memories)
    assert summary["groups_changed"] == {"default": ["SessionHistory", "ConversationSummary"],
                                         "plugins": ["Processes", "RepoProfile"]}  # fmt: skip
    assert standin.fail_next == []  # every refusal was answered, then retried
    assert "would write" in done.stderr
    # A bar per scope, closed with its verdict.
    assert "default/UserKnowledge/u1" in done.stderr and "saturated" in done.stderr
    assert _exported(target, key) == {}
    groups = httpx.get(f"{target.url}/v1/groups", headers={"Authorization": f"Bearer {key}"})
    assert [g["name"] for g in groups.json()["groups"]] == ["default"]


def test_a_pull_broken_off_resumes_with_the_scopes_not_done(
    standin: EngramStandin, target: LiveServer, tmp_path: Path
) -> None:
    fill(standin, random.Random(9))
    standin.fail_at, standin.fail_next = 500, [(503, None)]  # a full pull makes ~750
    users = tmp_path / "users.txt"
    users.write_text("u1\nu2\n", "utf-8")
    key = target.create_key("resumed")
    state, report = tmp_path / "state.json", tmp_path / "report.json"
    args = ("import", "--from-engram", standin.url, "--key", standin.key, "--users", str(users),
            "--url", target.url, "--api-key", key, "--state", str(state),
            "--report", str(report), "--concurrency", "1")  # fmt: skip
    broken = _cli(*args, "--retries", "0")
    assert broken.exit_code == 1, broken.output
    assert "503" in broken.stderr and "re-run to resume" in broken.stderr
    done_before = json.loads(state.read_text("utf-8"))["done"]
    assert done_before and not report.exists()
    resumed = _cli(*args)
    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(report.read_text("utf-8"))
    assert summary["resumed_scopes"] == len(done_before)
    assert len(_exported(target, key)) == len(standin.memories)
    assert not state.exists()  # complete: a next run starts from the beginning
