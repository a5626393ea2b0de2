"""Consolidate a cluster of similar episodes into one rule (or rewrite the cluster's rule).

One call per cluster. `current_rule` is set when the cluster already has a rule: the answer
is then its rewritten content, with the new episodes folded in (history keeps the old).
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from mnemo.contracts.llm import ChatMessage, Prompt


class Episode(BaseModel):
    id: str
    content: str
    date: str  # ISO date the episode was recorded


class Context(BaseModel):
    rule_topic: str
    rule_description: str
    instructions: str = ""
    # The cluster's rule, when it has one; None for a new cluster.
    current_rule: str | None = None
    # Episodes the current rule was built from (for reference), oldest first.
    earlier: list[Episode] = Field(default_factory=list)
    # The episodes to consolidate now, oldest first.
    episodes: list[Episode]
    today: str = ""


class Response(BaseModel):
    # The rule's full content; null when the episodes support no rule.
    rule: str | None
    # The ids of the episodes the rule rests on; null means all of them.
    used: list[str] | None = None


def messages(ctx: Context) -> list[ChatMessage]:
    task = (
        "Rewrite the CURRENT RULE so that it also covers the NEW EPISODES (keep what still "
        "holds, correct what they contradict)."
        if ctx.current_rule
        else "Write one rule that the NEW EPISODES, taken together, teach."
    )
    system = (
        "You consolidate an AI agent's episodic memories into semantic memory. Episodes are "
        "things that happened; a rule is the reusable lesson they support: a short, "
        "self-contained instruction that says what to prefer or avoid, when, and why (what "
        f"happened before). {task} Use only what the episodes say. List in 'used' the ids of "
        "the episodes the rule rests on; leave out episodes that do not fit. Answer with "
        "rule null if the episodes teach nothing general.\n"
        f"The rule is a memory of topic '{ctx.rule_topic}': {ctx.rule_description}\n"
        f"Today is {ctx.today}."
        + (f"\nAdditional instructions: {ctx.instructions}" if ctx.instructions else "")
    )
    body: dict[str, object] = {"new_episodes": [e.model_dump() for e in ctx.episodes]}
    if ctx.current_rule:
        body = {
            "current_rule": ctx.current_rule,
            "episodes_it_rests_on": [e.model_dump() for e in ctx.earlier],
            **body,
        }
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
    ]


PROMPT = Prompt(
    name="consolidate", context_model=Context, response_model=Response, messages=messages
)
