"""mnemo extensions (long poll, history, erase, groups, health and metrics), and Engram's
list and `/health`."""

from __future__ import annotations

import os

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration


def _add(http: httpx.Client, user: str, text: str, **extra) -> dict:
    response = http.post(
        "/v1/memories", json={"input": {"string": {"content": [text]}}, "user_id": user, **extra}
    )
    assert response.status_code == 200, response.text
    run = http.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run
    return run


def test_wait_long_poll_returns_terminal_run(http: httpx.Client, tenant: Tenant) -> None:
    response = http.post(
        "/v1/memories",
        json={"input": {"string": {"content": ["I run"]}}, "user_id": tenant.user, "group": None},
    )
    # A terminal status is the proof the long poll answered on completion, not on its wait
    # expiring (then it returns the run as it stands); no clock on a shared machine.
    run = http.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed"
    assert set(run) >= {
        "run_id",
        "status",
        "group_id",
        "starting_step",
        "input_type",
        "created_at",
        "updated_at",
        "committed_operations",
    }
    assert run["created_at"].endswith("Z")
    op = run["committed_operations"]["created"][0]
    assert op["committed_at"].endswith("Z")
    assert http.get(f"/v1/runs/{run['run_id']}", params={"wait": 61}).status_code == 422
    assert http.get("/v1/runs/unknown-run").status_code == 404


def test_retry_only_failed_runs(http: httpx.Client, tenant: Tenant) -> None:
    run = _add(http, tenant.user, "I swim")
    response = http.post(f"/v1/runs/{run['run_id']}/retry")
    assert response.status_code == 409, response.text


def test_history_and_erase(http: httpx.Client, tenant: Tenant) -> None:
    memory_id = _add(http, tenant.user, "I like jazz")["committed_operations"]["created"][0][
        "memory_id"
    ]
    history = http.get(f"/v1/memories/{memory_id}/history", params={"user_id": tenant.user})
    assert history.status_code == 200 and history.json() == {"memory_id": memory_id, "versions": []}
    assert (
        http.get(f"/v1/memories/{memory_id}/history", params={"user_id": "other"}).status_code
        == 404
    )
    erased = http.delete(
        f"/v1/memories/{memory_id}", params={"user_id": tenant.user, "erase": "true"}
    )
    assert erased.status_code == 204
    assert (
        http.get(f"/v1/memories/{memory_id}/history", params={"user_id": tenant.user}).status_code
        == 404
    )


def test_delete_keeps_history(http: httpx.Client, tenant: Tenant) -> None:
    memory_id = _add(http, tenant.user, "I like blues")["committed_operations"]["created"][0][
        "memory_id"
    ]
    assert (
        http.delete(f"/v1/memories/{memory_id}", params={"user_id": tenant.user}).status_code == 204
    )
    versions = http.get(
        f"/v1/memories/{memory_id}/history", params={"user_id": tenant.user}
    ).json()["versions"]
    assert [v["change"] for v in versions] == ["deleted"]


def test_erase_user(http: httpx.Client, tenant: Tenant) -> None:
    _add(http, tenant.user, "I like tea")
    _add(http, tenant.user, "I like coffee")
    response = http.delete(f"/v1/users/{tenant.user.upper()}")
    assert response.status_code == 200
    report = response.json()
    assert report.pop("completed_at").endswith("Z")  # the clean-up committed then
    assert report == {
        "erased": 2,  # memories, the field older clients read
        "memories": 2,
        "versions": 0,
        "drafts": 0,
        "buffer_items": 0,
        "bus_records": 0,
        "runs_redacted": 2,
        "runs_stopped": 0,
    }
    listed = http.post("/v1/memories/list", json={"user_id": tenant.user}).json()
    assert listed == {"memories": [], "total": 0}


def test_an_erased_users_run_keeps_its_id_and_status_but_not_its_content(
    http: httpx.Client, tenant: Tenant
) -> None:
    run = _add(http, tenant.user, "I keep a diary", properties={"device": "phone"})
    assert run["erased"] is False and run["user_id"] == tenant.user
    assert http.delete(f"/v1/users/{tenant.user}").json()["runs_redacted"] == 1
    after = http.get(f"/v1/runs/{run['run_id']}").json()
    assert after["erased"] is True and after["user_id"] is None
    assert {k: after[k] for k in ("run_id", "status", "group_id", "input_type", "created_at")} == {
        k: run[k] for k in ("run_id", "status", "group_id", "input_type", "created_at")
    }
    assert after["committed_operations"]["created"] == run["committed_operations"]["created"]
    assert "diary" not in str(after) and "phone" not in str(after)


def test_list_newest_first_with_total_and_offset(http: httpx.Client, tenant: Tenant) -> None:
    for text in ("I ski", "I surf", "I sail"):
        _add(http, tenant.user, text)
    page = http.post("/v1/memories/list", json={"user_id": tenant.user, "limit": 2}).json()
    assert page["total"] == 3
    assert [m["content"] for m in page["memories"]] == ["User said: I sail", "User said: I surf"]
    assert "score" not in page["memories"][0]
    rest = http.post("/v1/memories/list", json={"user_id": tenant.user, "limit": 2, "offset": 2})
    assert [m["content"] for m in rest.json()["memories"]] == ["User said: I ski"]
    assert rest.json()["total"] == 3
    refused = http.post("/v1/memories/list", json={"user_id": tenant.user, "offset": -1})
    assert refused.status_code == 422
    assert [e["location"] for e in refused.json()["errors"]] == ["body.offset"]


def test_groups(http: httpx.Client, tenant: Tenant) -> None:
    groups = http.get("/v1/groups").json()["groups"]
    assert groups[0]["group_id"] == "default" and groups[0]["name"] == "default"
    topic = groups[0]["topics"][0]
    assert set(topic) == {"topic_name", "description", "is_bounded", "scoping"}
    assert set(topic["scoping"]) == {"user_scoped", "scope_properties"}

    document = {
        "topics": [
            {
                "name": "Notes",
                "description": "Anything worth noting",
                "scoping": {"scope_properties": ["team"]},
            }
        ],
        "pipeline": {
            "steps": [
                {"id": "pre", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
                {"id": "commit", "kind": "commit"},
            ]
        },
    }
    put = http.put("/v1/groups/team-notes", json=document)
    assert put.status_code == 200, put.text
    full = http.get("/v1/groups/team-notes").json()
    assert full["pipeline"]["steps"][0]["id"] == "pre"
    assert {g["name"] for g in http.get("/v1/groups").json()["groups"]} == {"default", "team-notes"}
    refused = http.post(
        "/v1/memories",
        json={
            "group": "team-notes",
            "input": {"pre_extracted": {"items": [{"content": "x", "topic": "Notes"}]}},
        },
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["location"] == "body.properties.team"
    assert http.get("/v1/groups/missing").status_code == 404
    bad = http.put("/v1/groups/broken", json={"template": "no-such-template"})
    assert bad.status_code == 400


def test_health_ready_metrics_openapi(tenant: Tenant) -> None:
    health = httpx.get(f"{tenant.url}/health")  # Engram's, without a key
    assert health.status_code == 200
    assert health.json() == {"status": "healthy", "service": "mnemo"}
    assert httpx.get(f"{tenant.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{tenant.url}/readyz").json()
    assert ready["status"] == "ready"
    assert {c["name"]: c["ok"] for c in ready["checks"]} == {"database": True, "workers": True}
    assert any(w["role"] == "embedded" and w["pid"] == os.getpid() for w in ready["workers"])
    metrics = httpx.get(f"{tenant.url}/metrics")
    assert metrics.status_code == 200 and "mnemo_add_seconds" in metrics.text
    spec = httpx.get(f"{tenant.url}/openapi.json").json()
    # Engram's own operations are not tagged as extensions.
    assert spec["paths"]["/v1/memories/list"]["post"]["tags"] == ["memories"]
    assert spec["paths"]["/health"]["get"]["tags"] == ["health"]
    assert "mnemo extensions" in spec["paths"]["/healthz"]["get"]["tags"]
    assert httpx.get(f"{tenant.url}/docs").status_code == 200
