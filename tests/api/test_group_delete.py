"""`DELETE /v1/groups/{name}` (mnemo extension): refused while the group holds memories
unless `?force=true`; a problem document otherwise; `default` comes back on next use."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.integration


def _add(http: httpx.Client, group: str, content: str) -> None:
    body = {"user_id": "u1", "group": group,
            "input": {"pre_extracted": {"items": [{"topic": "UserKnowledge",
                                                   "content": content}]}}}  # fmt: skip
    added = http.post("/v1/memories", json=body)
    assert added.status_code == 200, added.text
    run = http.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run


def test_a_group_with_memories_is_deleted_only_with_force(http: httpx.Client) -> None:
    assert http.put("/v1/groups/crm", json={"template": "default"}).status_code == 200
    _add(http, "crm", "Acme renews in May.")
    _add(http, "default", "u1 likes tea.")
    refused = http.delete("/v1/groups/crm")
    assert refused.status_code == 409
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert "holds 1 memories" in refused.json()["detail"]
    assert refused.json()["errors"][0]["location"] == "query.force"
    assert http.get("/v1/groups/crm").status_code == 200  # nothing was removed

    gone = http.delete("/v1/groups/crm", params={"force": "true"})
    assert gone.status_code == 200, gone.text
    assert gone.json() == {"group": "crm", "deleted": True, "memories_deleted": 1}
    assert http.get("/v1/groups/crm").status_code == 404
    assert http.post("/v1/memories/list", json={"group": "crm", "user_id": "u1"}).status_code == 422
    assert http.delete("/v1/groups/crm").status_code == 404
    # The other group's memories are untouched.
    kept = http.post("/v1/memories/list", json={"user_id": "u1"}).json()["memories"]
    assert [m["content"] for m in kept] == ["u1 likes tea."]


def test_an_empty_default_group_is_deleted_and_comes_back_from_the_template(
    http: httpx.Client,
) -> None:
    topics = [{"name": "Notes", "description": "Notes.", "scoping": {"user_scoped": True}}]
    own = http.get("/v1/groups/default").json()
    made = http.put("/v1/groups/default", json={"topics": topics, "pipeline": own["pipeline"]})
    assert made.status_code == 200, made.text
    assert http.delete("/v1/groups/default").status_code == 200
    back = http.get("/v1/groups/default").json()
    assert "UserKnowledge" in [t["name"] for t in back["topics"]]
