"""Scoped credentials on every REST route (issue 40): a read-only key gets 403 problem
documents on writes and stores nothing; a key bound to one user_id sees and writes only
that user's memories and runs (403 for naming another user, 404 for another user's
records), and no project-wide route."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer

pytestmark = pytest.mark.integration
PROBLEM = "application/problem+json"


@dataclass
class Scoped:
    url: str
    rw: httpx.Client
    ro: httpx.Client
    ana: httpx.Client  # bound to user "ana"
    ana_memory: str
    bob_memory: str
    ana_run: str
    bob_run: str


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=70, headers={"Authorization": f"Bearer {key}"})


def _add(client: httpx.Client, text: str, user: str | None) -> tuple[str, str]:
    body: dict[str, Any] = {"input": {"string": {"content": [text]}}}
    if user is not None:
        body["user_id"] = user
    added = client.post("/v1/memories", json=body)
    assert added.status_code == 200, added.text
    run = client.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run
    return run["run_id"], run["committed_operations"]["created"][0]["memory_id"]


@pytest.fixture
def scoped(tenant: Tenant, live_server: LiveServer) -> Any:
    rw = _client(tenant.url, tenant.key)
    ro = _client(tenant.url, live_server.create_key(tenant.project, writable=False))
    ana = _client(tenant.url, live_server.create_key(tenant.project, user_id="ANA"))
    ana_run, ana_memory = _add(rw, "Ana keeps bees", "ana")
    bob_run, bob_memory = _add(rw, "Bob restores clocks", "bob")
    yield Scoped(tenant.url, rw, ro, ana, ana_memory, bob_memory, ana_run, bob_run)
    for client in (rw, ro, ana):
        client.close()


def _refused(answer: httpx.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith(PROBLEM)
    problem: dict[str, Any] = answer.json()
    assert problem["status"] == status and problem["detail"]
    return problem


def _total(client: httpx.Client, user: str) -> int:
    total: int = client.post("/v1/memories/list", json={"user_id": user}).json()["total"]
    return total


def test_a_read_only_key_reads_everything_and_writes_nothing(scoped: Scoped) -> None:
    ro, s = scoped.ro, scoped
    add = {"input": {"string": {"content": ["Ana owns a boat"]}}, "user_id": "ana"}
    writes = [
        ro.post("/v1/memories", json=add),
        ro.delete(f"/v1/memories/{s.ana_memory}", params={"user_id": "ana"}),
        ro.delete(f"/v1/memories/{s.ana_memory}", params={"user_id": "ana", "erase": "true"}),
        ro.put("/v1/groups/other", json={"template": "default"}),
        ro.delete("/v1/groups/default"),
        ro.post(f"/v1/runs/{s.ana_run}/retry"),
        ro.delete("/v1/users/ana"),
        ro.post("/v1/import", json={"groups": [], "memories": []}),
    ]
    for answer in writes:
        assert "read-only" in _refused(answer, 403)["detail"]
    assert _total(s.rw, "ana") == 1 and s.rw.get("/v1/groups/other").status_code == 404
    reads = [
        ro.post("/v1/memories/search", json={"query": "bees", "user_id": "ana"}),
        ro.post("/v1/memories/list", json={"user_id": "bob"}),
        ro.get(f"/v1/memories/{s.ana_memory}", params={"user_id": "ana"}),
        ro.get(f"/v1/memories/{s.ana_memory}/history", params={"user_id": "ana"}),
        ro.get(f"/v1/memories/{s.ana_memory}/provenance", params={"user_id": "ana"}),
        ro.get(f"/v1/memories/{s.ana_memory}/sources", params={"user_id": "ana"}),
        ro.get(f"/v1/runs/{s.bob_run}"),
        ro.get("/v1/groups"),
        ro.get("/v1/groups/default"),
        ro.get("/v1/status"),
        ro.get("/v1/export"),
        ro.get("/v1/auth/verify"),
    ]
    for answer in reads:
        assert answer.status_code in (200, 204), (answer.request.url, answer.text)


def test_a_user_bound_key_sees_only_its_user(scoped: Scoped) -> None:
    ana, s = scoped.ana, scoped
    listed = ana.post("/v1/memories/list", json={}).json()
    assert [m["id"] for m in listed["memories"]] == [s.ana_memory]
    found = ana.post("/v1/memories/search", json={"query": "clocks bees"}).json()
    assert [m["id"] for m in found["memories"]] == [s.ana_memory]
    assert ana.get(f"/v1/memories/{s.ana_memory}").status_code == 200
    assert ana.get(f"/v1/runs/{s.ana_run}").status_code == 200
    # Another user's records do not exist for it; naming another user is refused.
    for path in ("", "/history", "/provenance", "/sources"):
        _refused(ana.get(f"/v1/memories/{s.bob_memory}{path}"), 404)
        _refused(ana.get(f"/v1/memories/{s.bob_memory}{path}", params={"user_id": "bob"}), 403)
    _refused(ana.get(f"/v1/runs/{s.bob_run}"), 404)
    _refused(ana.get(f"/v1/runs/{s.bob_run}", params={"wait": 1}), 404)
    _refused(ana.post(f"/v1/runs/{s.bob_run}/retry"), 404)
    _refused(ana.post("/v1/memories/list", json={"user_id": "bob"}), 403)
    _refused(ana.post("/v1/memories/search", json={"query": "clocks", "user_id": "bob"}), 403)
    _refused(ana.delete(f"/v1/memories/{s.bob_memory}"), 404)
    _refused(ana.delete(f"/v1/memories/{s.bob_memory}", params={"user_id": "bob"}), 403)
    _refused(ana.delete("/v1/users/bob"), 403)
    add_bob = {"input": {"string": {"content": ["Bob is away"]}}, "user_id": "bob"}
    _refused(ana.post("/v1/memories", json=add_bob), 403)
    assert _total(s.rw, "bob") == 1  # nothing of bob's changed
    # Project-wide routes are refused to it.
    for answer in (
        ana.get("/v1/status"),
        ana.get("/v1/export"),
        ana.post("/v1/import", json={"groups": [], "memories": []}),
        ana.put("/v1/groups/other", json={"template": "default"}),
        ana.delete("/v1/groups/default"),
        ana.get("/v1/groups/default/consolidation"),
    ):
        assert "bound to one user_id" in _refused(answer, 403)["detail"]
    assert ana.get("/v1/groups").status_code == 200


def test_a_user_bound_key_writes_as_its_user(scoped: Scoped) -> None:
    ana, s = scoped.ana, scoped
    run_id, memory_id = _add(ana, "Ana learns Welsh", None)  # no user_id: taken as ana's
    assert ana.get(f"/v1/runs/{run_id}").json()["user_id"] == "ana"
    assert s.rw.get(f"/v1/memories/{memory_id}", params={"user_id": "ana"}).status_code == 200
    assert ana.delete(f"/v1/memories/{memory_id}", params={"user_id": "Ana"}).status_code == 204
    erased = ana.delete("/v1/users/ana")
    assert erased.status_code == 200, erased.text
    assert _total(s.rw, "ana") == 0 and _total(s.rw, "bob") == 1
