"""Examples 4, 5 and 6 of shared/examples.md as data: the groups, the inputs, and the LLM
answers the tests script (shared by the embedded and the Kafka suites)."""

from __future__ import annotations

import json
from typing import Any

DESK = "violin-bridge-fitting-desk-9"
EPISODES = [
    "A tall bridge was fitted; the player reported a harsh response.",
    "The customer heard a wolf tone near C on the G string after the tall bridge job.",
    "A refit with a lower bridge cut and thinner feet; the wolf eased and the response evened out.",
]
LATE_EPISODE = "Another tall bridge gave a wolf near C on the G string; a lower cut fixed it."
# A later episode that qualifies what the rule rests on: the rule is rewritten for it.
CONTRARY_EPISODE = (
    "Another tall bridge gave a wolf near C on the G string; a lower cut did not fix it, a "
    "heavier tailpiece did."
)
RULE = (
    "On this desk, prefer a lower bridge cut with thinner feet when the response is harsh or a "
    "wolf appears near C on the G string; tall bridges caused both before."
)
RULE_V2 = RULE + " Confirmed again on a later job."
QUESTION = "customer says the G string howls near C"

LUTHIER_GROUP: dict[str, Any] = {
    "topics": [
        {"name": "Episodes", "description": "What happened at the desk: jobs, problems, fixes.",
         "scoping": {"user_scoped": True, "scope_properties": ["desk_id"]}},
        {"name": "Rules", "description": "Lessons that hold at this desk.",
         "scoping": {"user_scoped": True, "scope_properties": ["desk_id"]}},
    ],
    "pipeline": {"steps": [
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
    # Hash vectors (tests) are far less alike than a language model's: the threshold is low.
    "consolidation": {"episode_topics": ["Episodes"], "rule_topic": "Rules",
                      "min_episodes": 3, "similarity": 0.0, "triggers": {"count": 1}},
}  # fmt: skip

BENCH = "darkroom-enlarger-bench-5"
GRADE_2 = "For muddy midtones on multigrade paper start with a grade 2 filter and soft light."
CORRECTION = "Actually not grade 2. Use grade 4 with less diffusion, not soft light."
CORRECTION_QUOTE = "Use grade 4 with less diffusion, not soft light"
EXTRACTED = "For muddy midtones on multigrade paper use grade 4 with less diffusion."
GRADE_4 = (
    "For muddy midtones on multigrade paper start with a grade 4 filter and less diffusion, "
    "not soft light."
)
RESTATEMENT = "yes, grade 4 as usual"

DARKROOM_GROUP: dict[str, Any] = {
    "topics": [
        {"name": "Rules", "description": "Printing rules that hold at this bench.",
         "scoping": {"user_scoped": True, "scope_properties": ["bench_id"]}},
    ],
    "pipeline": {"steps": [
        {"id": "talk", "kind": "extract", "input_type": "conversation", "next": "reconcile"},
        # Reconcile is always asked (hash vectors are no guide to a similarity floor).
        {"id": "reconcile", "kind": "transform_with_context", "next": "commit",
         "min_similarity": -1.0},
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
    "reconsolidation": {"labile_window": "15m", "only_recalled": True, "max_per_hour": 2,
                        "min_similarity": -1.0},
}  # fmt: skip


def user_body(request_json: dict[str, Any]) -> dict[str, Any]:
    user = next(m for m in request_json["messages"] if m["role"] == "user")
    body: dict[str, Any] = json.loads(user["content"])
    return body


def consolidate_answer(request_json: dict[str, Any]) -> dict[str, Any]:
    """The first rule from the three episodes; a rewrite when a rule exists already."""
    body = user_body(request_json)
    return {"rule": RULE_V2 if "current_rule" in body else RULE, "used": None}


def extract_as(content: str, topic: str = "Rules") -> dict[str, Any]:
    return {"memories": [{"topic": topic, "content": content}]}


def verdict(
    memory_id: str, decision: str, evidence: str, content: str | None = None
) -> dict[str, Any]:
    answer: dict[str, Any] = {"id": memory_id, "decision": decision, "evidence": evidence}
    if content is not None:
        answer["content"] = content
    answer["covers"] = [0]
    return {"verdicts": [answer]}


def conversation(*turns: tuple[str, str]) -> dict[str, Any]:
    return {"conversation": {"messages": [{"role": r, "content": c} for r, c in turns]}}


def facts(topic: str, *contents: str) -> dict[str, Any]:
    return {"pre_extracted": {"items": [{"topic": topic, "content": c} for c in contents]}}
