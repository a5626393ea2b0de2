"""Weaviate's Engram agent plugin (weaviate/engram-plugins 1.1.0), its documented hook flow,
against a real `mnemo serve --template engram_quickstart` process.

Written from the plugin's documented behaviour, not its code:
- it reads `GET /v1/groups` (the `default` group) to learn the scope properties to infer
  (`repo_name` from the git remote, `session_id` from the assistant);
- the Stop hook adds the finished turn, user and assistant messages, with those properties;
- recall before each prompt searches with `properties: {repo_name}`, optionally with
  per-topic `null` overrides (its `clear_properties`);
- the SessionStart hook loads `DeveloperPreferences` with a fetch of limit 100.
The scripted LLM server plays the extraction model.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from engram import (
    BM25Retrieval,
    EngramClient,
    FetchRetrieval,
    HybridRetrieval,
    Topic,
    VectorRetrieval,
)

from tests.support.ports import free_port
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
DEVELOPER = "Dev@Example.com"
MODES = ("vector", "bm25", "hybrid", "fetch", "list")

# What the scripted model extracts from each message of a turn: (topic, memory).
FACTS = {
    "From now on I want type hints everywhere and small commits.": (
        "DeveloperPreferences",
        "Prefers type hints and small commits.",
    ),
    "Noted. The tests run with make test before each release.": (
        "Processes",
        "In acme/api the tests run with make test before each release.",
    ),
    "Please answer in British English from now on.": (
        "DeveloperPreferences",
        "Prefers answers in British English.",
    ),
    "Will do. Releases of acme/web are cut with make release.": (
        "Processes",
        "Releases of acme/web are cut with make release.",
    ),
}
PREFERENCES = "Prefers type hints and small commits. Prefers answers in British English."


def _current(system_prompt: str) -> dict[str, str]:
    """The bounded topics' current memories, as the extract prompt lists them."""
    current, topic = {}, ""
    for line in system_prompt.splitlines():
        if match := re.match(r"^- (\w+)", line):
            topic = match.group(1)
        elif line.strip().startswith("current:"):
            current[topic] = line.split("current:", 1)[1].strip()
    return current


def extract(request: dict[str, Any]) -> dict[str, Any]:
    system = request["messages"][0]["content"]
    units = json.loads(request["messages"][-1]["content"])["input"]
    current = _current(system)
    memories: list[dict[str, str]] = []
    merged = current.get("DeveloperPreferences", "")
    for unit in units:
        topic, content = FACTS.get(unit.partition(": ")[2], ("", ""))
        if topic == "DeveloperPreferences":
            merged = f"{merged} {content}".strip()
        elif topic:
            memories.append({"topic": topic, "content": content})
    if merged != current.get("DeveloperPreferences", ""):
        memories.append({"topic": "DeveloperPreferences", "content": merged})
    asked = next(u.partition(": ")[2] for u in units if u.startswith("user: "))
    summary = f"{current.get('SessionHistory', 'Session:')} The developer said: {asked}"
    memories.append({"topic": "SessionHistory", "content": summary})
    return {"memories": memories}


@dataclass
class Served:
    url: str
    key: str
    stderr: str


@pytest.fixture(scope="module")
def served(
    postgres: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """`mnemo serve --template engram_quickstart` on a fresh database, as a real process."""
    data_dir = tmp_path_factory.mktemp("serve")
    port = free_port()
    with ScriptedLLMServer(echo=True) as llm:
        llm.script("extract", extract)
        env = {
            **os.environ,
            "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
            "MNEMO_DATABASE_URL": postgres.new_database("plugin"),
            "MNEMO_LLM_BASE_URL": llm.base_url,
            "MNEMO_LLM_API_KEY": "scripted",
            "MNEMO_LLM_MODEL": "scripted",
            "MNEMO_EMBEDDING_PROVIDER": "hash",
            "MNEMO_EMBEDDING_DIM": "384",
            "MNEMO_WORKERS": "4",
            "MNEMO_DB_POOL_SIZE": "5",
            "MNEMO_BUS_POLL_SECONDS": "0.05",
        }
        log_path = data_dir / "serve.log"
        with log_path.open("w") as log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mnemo.cli.main",
                    "serve",
                    "--template",
                    "engram_quickstart",
                    "--port",
                    str(port),
                    "--data-dir",
                    str(data_dir),
                    "--print-key-to",
                    str(data_dir / "key"),
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                url = f"http://127.0.0.1:{port}"
                _wait_healthy(url, process, log_path)
                output = log_path.read_text()
                key = (data_dir / "key").read_text().strip()
                assert key and key not in output, output  # the key never reaches the log
                yield Served(url, key, output)
            finally:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mnemo serve exited: {log_path.read_text()}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"mnemo serve did not answer /health: {log_path.read_text()}")


@pytest.fixture(scope="module")
def client(served: Served) -> Iterator[EngramClient]:
    with EngramClient(base_url=served.url, api_key=served.key) as engram:
        yield engram


def _stop_hook(client: EngramClient, repo: str, session: str, user: str, answer: str) -> None:
    """The Stop hook: the finished turn as a conversation, with the inferred properties."""
    run = client.memories.add(
        [{"role": "user", "content": user}, {"role": "assistant", "content": answer}],
        user_id=DEVELOPER,
        properties={"repo_name": repo, "session_id": session},
    )
    status = client.runs.wait(run.run_id, timeout=60, interval=0.1)
    assert status.status == "completed", status.error


@pytest.fixture(scope="module")
def sessions(served: Served, client: EngramClient) -> None:
    """Two sessions, in two repositories, each ending one turn."""
    groups = httpx.get(
        f"{served.url}/v1/groups", headers={"Authorization": f"Bearer {served.key}"}
    ).json()["groups"]
    default = next(g for g in groups if g["name"] == "default")
    scope_keys = {k for t in default["topics"] for k in t["scoping"]["scope_properties"]}
    assert scope_keys == {"repo_name", "session_id"}  # what the plugin infers and sends
    by_name = {t["topic_name"]: t for t in default["topics"]}
    assert by_name["DeveloperPreferences"]["is_bounded"]
    assert by_name["DeveloperPreferences"]["scoping"] == {
        "user_scoped": True,
        "scope_properties": [],
    }
    _stop_hook(
        client,
        "acme/api",
        "s1",
        "From now on I want type hints everywhere and small commits.",
        "Noted. The tests run with make test before each release.",
    )
    _stop_hook(
        client,
        "acme/web",
        "s2",
        "Please answer in British English from now on.",
        "Will do. Releases of acme/web are cut with make release.",
    )


def test_serve_applied_the_template(served: Served) -> None:
    assert "created the default group from template 'engram_quickstart'" in served.stderr


def _recall(
    served: Served, client: EngramClient, mode: str, query: str, **filters: Any
) -> list[dict[str, Any]]:
    """A search with the SDK in each retrieval mode; list is raw HTTP (the SDK has none)."""
    if mode == "list":
        body: dict[str, Any] = {"user_id": DEVELOPER, "limit": 100, **filters}
        if "topics" in body:
            body["topics"] = [
                t if isinstance(t, str) else {"name": t.name, "properties": t.properties}
                for t in body["topics"]
            ]
        listed = httpx.post(
            f"{served.url}/v1/memories/list",
            json=body,
            headers={"Authorization": f"Bearer {served.key}"},
        )
        assert listed.status_code == 200, listed.text
        return [{"properties": None, **m} for m in listed.json()["memories"]]
    config = {
        "vector": VectorRetrieval(limit=100),
        "bm25": BM25Retrieval(limit=100),
        "hybrid": HybridRetrieval(limit=100),
        "fetch": FetchRetrieval(limit=100),
    }[mode]
    found = client.memories.search(
        query=query, user_id=DEVELOPER, retrieval_config=config, **filters
    )
    return [{"content": m.content, "topic": m.topic, "properties": m.properties} for m in found]


PROMPT = "How do I release this, what do I prefer, and what happened in this session?"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.usefixtures("sessions")
def test_recall_in_another_repository(served: Served, client: EngramClient, mode: str) -> None:
    # Recall before a prompt in acme/web: the plugin narrows by repo_name.
    recalled = _recall(served, client, mode, PROMPT, properties={"repo_name": "acme/web"})
    assert sorted((m["topic"], m["content"]) for m in recalled) == [
        ("DeveloperPreferences", PREFERENCES),  # learned partly in acme/api
        ("Processes", "Releases of acme/web are cut with make release."),
        (
            "SessionHistory",
            "Session: The developer said: Please answer in British English from now on.",
        ),
    ]
    # With per-topic null overrides (the plugin's clear_properties): session history across
    # repositories; Processes keep the repo_name filter.
    widened = _recall(
        served,
        client,
        mode,
        PROMPT,
        properties={"repo_name": "acme/web"},
        topics=[
            "Processes",
            Topic(name="SessionHistory", properties={"repo_name": None, "session_id": None}),
            Topic(name="DeveloperPreferences", properties={"repo_name": None}),
        ],
    )
    assert sorted((m["topic"], sorted((m["properties"] or {}).items())) for m in widened) == [
        ("DeveloperPreferences", []),
        ("Processes", [("repo_name", "acme/web")]),
        ("SessionHistory", [("repo_name", "acme/api"), ("session_id", "s1")]),
        ("SessionHistory", [("repo_name", "acme/web"), ("session_id", "s2")]),
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.usefixtures("sessions")
def test_preferences_at_session_start(served: Served, client: EngramClient, mode: str) -> None:
    # A new session in a third repository loads the standing preferences once.
    loaded = _recall(
        served,
        client,
        mode,
        "DeveloperPreferences preferences",
        topics=["DeveloperPreferences"],
        properties={"repo_name": "acme/docs"},
    )
    assert [(m["topic"], m["content"]) for m in loaded] == [("DeveloperPreferences", PREFERENCES)]
