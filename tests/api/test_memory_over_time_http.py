"""Memory over time over HTTP: the group sections, the new fields and endpoints, and that
Engram's own shapes stay as they were."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.support.dynamics import DESK, EPISODES, LUTHIER_GROUP, RULE

pytestmark = pytest.mark.integration


def test_sections_stay_out_of_engrams_group_listing(http: httpx.Client) -> None:
    assert http.put("/v1/groups/luthier", json=LUTHIER_GROUP).status_code == 200
    listed = http.get("/v1/groups").json()["groups"]
    [luthier] = [g for g in listed if g["name"] == "luthier"]
    assert set(luthier) == {"group_id", "name", "topics"}
    config = http.get("/v1/groups/luthier").json()
    assert config["consolidation"]["rule_topic"] == "Rules"
    assert config["reconsolidation"] is None
    status = http.get("/v1/groups/luthier/consolidation").json()
    assert status == {"group": "luthier", "scopes": []}


def test_an_invalid_section_is_refused_with_its_location(http: httpx.Client) -> None:
    bad = {**LUTHIER_GROUP, "consolidation": {**LUTHIER_GROUP["consolidation"], "rule_topic": "X"}}
    response = http.put("/v1/groups/bad", json=bad)
    assert response.status_code == 400
    assert "consolidation names unknown topics: X" in response.text
    bad = {**LUTHIER_GROUP, "reconsolidation": {"labile_window": "a while"}}
    response = http.put("/v1/groups/bad", json=bad)
    assert response.status_code == 400 and "labile_window" in response.text
    assert http.get("/v1/groups/bad").status_code == 404


def test_a_run_keeps_engrams_shape_and_recalled_is_checked(
    http: httpx.Client, tenant: Tenant
) -> None:
    add = {"input": {"string": {"content": ["I keep bees"]}}, "user_id": tenant.user}
    response = http.post("/v1/memories", json=add)
    run = http.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed" and "reconsolidation" not in run
    response = http.post("/v1/memories", json={**add, "recalled": [""]})
    assert response.status_code == 422 and "body.recalled[0]" in response.text
    response = http.post("/v1/memories", json={**add, "recalled": ["m"] * 101})
    assert response.status_code == 422 and "body.recalled" in response.text


def test_rule_sources_and_include_consolidated(http: httpx.Client, llm_server) -> None:  # type: ignore[no-untyped-def]
    llm_server.script("consolidate", {"rule": RULE, "used": None})
    try:
        assert http.put("/v1/groups/luthier", json=LUTHIER_GROUP).status_code == 200
        scope = {"group": "luthier", "user_id": "luthier-1", "properties": {"desk_id": DESK}}
        for text in EPISODES:
            items = [{"topic": "Episodes", "content": text}]
            response = http.post(
                "/v1/memories", json={**scope, "input": {"pre_extracted": {"items": items}}}
            )
            http.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30})
        deadline = time.monotonic() + 30
        while True:
            page = http.post("/v1/memories/list", json=scope).json()
            if page["memories"] and page["memories"][0]["topic"] == "Rules":
                break
            assert time.monotonic() < deadline, page
            time.sleep(0.2)
    finally:
        llm_server.reset()
    [rule] = page["memories"]
    assert "status" not in rule and "consolidated_into" not in rule
    sources = http.get(
        f"/v1/memories/{rule['id']}/sources",
        params={"user_id": "luthier-1", "group": "luthier"},
    ).json()
    assert [s["content"] for s in sources["sources"]] == EPISODES
    assert {s["status"] for s in sources["sources"]} == {"consolidated"}
    assert {s["consolidated_into"] for s in sources["sources"]} == {rule["id"]}
    found = http.post(
        "/v1/memories/search", json={**scope, "query": "wolf", "include_consolidated": True}
    ).json()
    assert {m["consolidated_into"] for m in found["memories"] if m["topic"] == "Episodes"} == {
        rule["id"]
    }
    assert (
        http.get(
            f"/v1/memories/{rule['id']}/sources",
            params={"user_id": "someone-else", "group": "luthier"},
        ).status_code
        == 404
    )
    status = http.get("/v1/groups/luthier/consolidation").json()
    [scope_state] = status["scopes"]
    assert scope_state["user_id"] == "luthier-1" and scope_state["new_episodes"] == 0
    assert scope_state["last_pass_at"].endswith("Z")
