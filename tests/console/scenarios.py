"""Data the console tests (and the screenshots in docs/console.md) are made of: a memory
rewritten by a second run, and a consolidated rule over three episodes."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
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


WORKSHOP_GROUP: dict[str, Any] = {
    "description": "A luthier's workshop: jobs at the bench, lessons, the maker's preferences.",
    "topics": [
        {"name": "Episodes", "description": "What happened at the bench: jobs, problems, fixes.",
         "scoping": {"user_scoped": True}},
        {"name": "Rules", "description": "Lessons that hold at this bench.",
         "scoping": {"user_scoped": True}},
        {"name": "Preferences", "description": "The maker's materials and ways of working.",
         "scoping": {"user_scoped": True}},
    ],
    "pipeline": {"steps": [
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "reconcile"},
        {"id": "reconcile", "kind": "transform_with_context", "min_similarity": -1.0,
         "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
    "retention": {"raw_input_days": 30},
    # Hash vectors (tests) are far less alike than a language model's: the threshold is low.
    "consolidation": {"episode_topics": ["Episodes"], "rule_topic": "Rules",
                      "min_episodes": 3, "similarity": 0.0, "triggers": {"count": 1}},
}  # fmt: skip

# (days ago, topic, text): "Now ..." rewrites the preference it shares most words with.
WORKSHOP_STORY = [
    (60, "Preferences", "I prefer spruce tops for violins."),
    (52, "Preferences", "I varnish with oil varnish in the summer."),
    (40, "Episodes", EPISODES[0]),
    (33, "Episodes", EPISODES[1]),
    (26, "Preferences", "Now I prefer cedar tops for violins, spruce only for cellos."),
    (19, "Episodes", EPISODES[2]),
    (9, "Preferences", "I keep the workshop at 45% humidity."),
    (3, "Preferences", "Now I varnish with spirit varnish all year round."),
]


def _overlap(a: str, b: str) -> int:
    return len(set(a.lower().split()) & set(b.lower().split()))


def rewrite_on_now(request_json: dict[str, Any]) -> dict[str, Any]:
    """Reconcile: a new memory saying "Now ..." rewrites the existing one it shares most
    words with (a supersession); every other new memory is kept."""
    body = json.loads(next(m["content"] for m in request_json["messages"] if m["role"] == "user"))
    existing: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    for item in body["new"]:
        candidates = [e for e in body["existing"] if _overlap(e["content"], item["content"]) > 2]
        if item["content"].startswith("Now ") and candidates:
            target = max(candidates, key=lambda e: _overlap(e["content"], item["content"]))
            existing.append({"id": target["id"], "action": "rewrite", "content": item["content"]})
            new.append({"index": item["index"], "action": "delete"})
        else:
            new.append({"index": item["index"], "action": "keep"})
    return {"existing": existing, "new": new}


def workshop(tenant: Tenant, llm: ScriptedLLMServer) -> str:
    """The workshop group's story for `tenant.user`, dated over two months; returns the
    consolidated rule's id once the pass has made it."""
    llm.script("transform_with_context", rewrite_on_now)
    llm.script("consolidate", {"rule": RULE, "used": None})
    now = datetime.now(UTC)
    scope = {"group": "workshop", "user_id": tenant.user}
    with api(tenant) as client:
        client.put("/v1/groups/workshop", json=WORKSHOP_GROUP).raise_for_status()
        for days, topic, text in WORKSHOP_STORY:
            at = (now - timedelta(days=days)).isoformat()
            items = {"items": [{"topic": topic, "content": text}], "created_at": at}
            response = client.post(
                "/v1/memories", json={**scope, "input": {"pre_extracted": items}}
            )
            run = client.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30}).json()
            assert run["status"] == "completed", run
        deadline = time.monotonic() + 60
        while True:
            listed = client.post("/v1/memories/list", json={**scope, "topics": ["Rules"]}).json()
            if listed["memories"]:
                return str(listed["memories"][0]["id"])
            assert time.monotonic() < deadline, listed
            time.sleep(0.2)
