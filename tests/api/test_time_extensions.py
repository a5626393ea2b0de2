"""Event time, `as_of` and provenance over HTTP (mnemo extensions)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration


def _add(http: httpx.Client, body: dict) -> dict:
    response = http.post("/v1/memories", json=body)
    assert response.status_code == 200, response.text
    run = http.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run
    return run


def _stamp() -> str:
    time.sleep(0.01)  # the instant falls strictly between two commits
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def test_event_time_is_an_extension_field_beside_the_system_times(
    http: httpx.Client, tenant: Tenant
) -> None:
    said = {"content": ["I brewed cider"], "created_at": "2024-10-05T18:00:00Z"}
    run = _add(http, {"user_id": tenant.user, "input": {"string": said}})
    memory_id = run["committed_operations"]["created"][0]["memory_id"]
    memory = http.get(f"/v1/memories/{memory_id}", params={"user_id": tenant.user}).json()
    assert memory["event_time"] == memory["event_time_end"] == "2024-10-05T18:00:00Z"
    assert memory["created_at"] > "2026" and memory["created_at"].endswith("Z")
    schema = http.get("/openapi.json").json()["components"]["schemas"]
    assert "mnemo extension" in schema["MemoryOut"]["properties"]["event_time"]["description"]


def test_search_and_list_as_of_answer_from_the_past(http: httpx.Client, tenant: Tenant) -> None:
    before = _stamp()
    run = _add(http, {"user_id": tenant.user, "input": {"string": {"content": ["I play oboe"]}}})
    memory_id = run["committed_operations"]["created"][0]["memory_id"]
    between = _stamp()
    assert (
        http.delete(f"/v1/memories/{memory_id}", params={"user_id": tenant.user}).status_code == 204
    )
    scope = {"user_id": tenant.user}
    for at, expected in ((before, []), (between, ["User said: I play oboe"]), (None, [])):
        extra = {"as_of": at} if at else {}
        found = http.post("/v1/memories/search", json={"query": "oboe", **scope, **extra}).json()
        listed = http.post("/v1/memories/list", json={**scope, **extra}).json()
        assert [m["content"] for m in found["memories"]] == expected, at
        assert [m["content"] for m in listed["memories"]] == expected, at
        assert listed["total"] == len(expected)


def test_as_of_without_an_offset_is_refused_naming_it(http: httpx.Client, tenant: Tenant) -> None:
    response = http.post(
        "/v1/memories/search",
        json={"query": "q", "user_id": tenant.user, "as_of": "2026-01-01T00:00:00"},
    )
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    [error] = response.json()["errors"]
    assert error["location"] == "body.as_of" and "timezone" in error["message"]


def test_provenance_over_http(http: httpx.Client, tenant: Tenant) -> None:
    said = {"content": ["I keep a sourdough starter"], "created_at": "2025-01-02T08:00:00Z"}
    run = _add(http, {"user_id": tenant.user, "input": {"string": said}})
    memory_id = run["committed_operations"]["created"][0]["memory_id"]
    found = http.get(f"/v1/memories/{memory_id}/provenance", params={"user_id": tenant.user})
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["memory_id"] == memory_id and body["run_ids"] == [run["run_id"]]
    [version] = body["versions"]
    assert version["operation"] == "created" and version["run_id"] == run["run_id"]
    assert version["event_time"] == "2025-01-02T08:00:00Z" and version["sources"] == []
    assert version["run"]["raw_input_state"] == "retained"
    assert version["run"]["raw_input"] == {"string": said}
    assert "valid_to" not in version  # the current state
    other = http.get(f"/v1/memories/{memory_id}/provenance", params={"user_id": "someone-else"})
    assert other.status_code == 404
    assert (
        http.get("/v1/memories/nope/provenance", params={"user_id": tenant.user}).status_code == 404
    )
