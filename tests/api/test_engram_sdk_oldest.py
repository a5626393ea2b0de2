"""The oldest `weaviate-engram` releases on PyPI against a live mnemo, as a user who pinned
one would run them: 0.1.0 (the oldest: a `content: {type, ...}` envelope, top-level
`conversation_id`, `topic` as a query parameter on get and delete) and 0.5.0 (the oldest
with `input`, still with top-level `conversation_id`); both search. Each release is
installed into a virtualenv of its own; without PyPI the test is skipped, saying so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration

ADD = """
import json, sys
from engram import EngramClient
client = EngramClient(base_url=sys.argv[1], api_key=sys.argv[2])
run = client.memories.add("I keep bees in the garden.", user_id="u1", conversation_id="c1")
print(json.dumps({"run_id": run.run_id, "status": run.status}))
"""
GET_DELETE = """
import inspect, json, sys
from engram import EngramClient
client = EngramClient(base_url=sys.argv[1], api_key=sys.argv[2])
# Releases before 0.5 require `topic` (sent as a query parameter) on get and delete.
extra = {"topic": "UserKnowledge"} if "topic" in inspect.signature(
    client.memories.get).parameters else {}
memory = client.memories.get(sys.argv[3], user_id="u1", **extra)
client.memories.delete(sys.argv[3], user_id="u1", **extra)
print(json.dumps({"content": memory.content, "topic_sent": bool(extra)}))
"""

SEARCH = """
import json, sys
from engram import EngramClient
client = EngramClient(base_url=sys.argv[1], api_key=sys.argv[2])
found = client.memories.search(query="bees garden", user_id="u1", conversation_id="c1")
print(json.dumps({"contents": [m.content for m in found]}))
"""


@pytest.fixture(scope="module", params=["0.1.0", "0.5.0"])
def old_sdk(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp(f"engram-{request.param}")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"weaviate-engram=={request.param}"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if installed.returncode != 0:
        pytest.skip(f"weaviate-engram {request.param} could not be installed: {installed.stderr}")
    return python


def _run(python: Path, script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([str(python), "-c", script, *args], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_an_old_sdk_adds_gets_and_deletes(
    old_sdk: Path, tenant: Tenant, http: httpx.Client
) -> None:
    added = _run(old_sdk, ADD, tenant.url, tenant.key)
    run = http.get(f"/v1/runs/{added['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run
    [created] = run["committed_operations"]["created"]
    # 0.1.0 reads search results wrapped as {"Body": memory}; mnemo knows it by its
    # User-Agent (mnemo.api.engram_releases) and answers it so.
    found = _run(old_sdk, SEARCH, tenant.url, tenant.key)
    assert any("bees" in c for c in found["contents"]), found
    got = _run(old_sdk, GET_DELETE, tenant.url, tenant.key, created["memory_id"])
    assert "bees" in got["content"]
    assert got["topic_sent"] == (old_sdk.parent.parent.name.startswith("engram-0.1.0"))
    assert http.get(f"/v1/memories/{created['memory_id']}",
                    params={"user_id": "u1"}).status_code == 404  # fmt: skip
