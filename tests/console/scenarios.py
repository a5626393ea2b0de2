"""Data the console tests (and the screenshots in docs/console.md) are made of: a memory
rewritten by a second run, and a consolidated rule over three episodes."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.api.fixtures import Tenant
from tests.console.helpers import add, api, memory_id_of
from tests.support.dynamics import DESK, EPISODES, LUTHIER_GROUP, RULE
from tests.support.scripted_llm import ScriptedLLMServer


def rewrite_existing(request_json: dict[str, Any]) -> dict[str, Any]:
    """Reconcile: rewrite the first existing memory with the new fact, drop the new one."""
    body = json.loads(next(m["content"] for m in request_json["messages"] if m["role"] == "user"))
    if not body["existing"]:
        return {
            "existing": [],
            "new": [{"index": n["index"], "action": "keep"} for n in body["new"]],
        }
    first = body["existing"][0]
    return {
        "existing": [
            {"id": first["id"], "action": "rewrite", "content": body["new"][0]["content"]}
        ],
        "new": [{"index": n["index"], "action": "delete"} for n in body["new"]],
    }


def rewritten_memory(
    tenant: Tenant, llm: ScriptedLLMServer
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A memory written by one run and rewritten by a second: (memory id, first, second)."""
    llm.script("transform_with_context", rewrite_existing)
    first = add(tenant, "I drink coffee every morning")
    second = add(tenant, "I switched from coffee to green tea")
    memory_id = memory_id_of(first)
    assert second["committed_operations"]["updated"][0]["memory_id"] == memory_id
    return memory_id, first, second


def consolidated_rule(tenant: Tenant, llm: ScriptedLLMServer) -> tuple[str, list[str]]:
    """The luthier group's three episodes consolidated into a rule: (rule id, episode ids)."""
    llm.script("consolidate", {"rule": RULE, "used": None})
    scope = {"group": "luthier", "user_id": tenant.user, "properties": {"desk_id": DESK}}
    with api(tenant) as client:
        client.put("/v1/groups/luthier", json=LUTHIER_GROUP).raise_for_status()
        episode_ids = []
        for text in EPISODES:
            items = [{"topic": "Episodes", "content": text}]
            response = client.post(
                "/v1/memories", json={**scope, "input": {"pre_extracted": {"items": items}}}
            )
            run = client.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30}).json()
            episode_ids.append(memory_id_of(run))
        deadline = time.monotonic() + 60
        while True:  # the consolidation pass runs after the third episode's commit
            page = client.post("/v1/memories/list", json=scope).json()
            if page["memories"] and page["memories"][0]["topic"] == "Rules":
                return str(page["memories"][0]["id"]), episode_ids
            assert time.monotonic() < deadline, page
            time.sleep(0.2)
