"""The scenario oracle: an OpenAI-compatible server (tests/support/scripted_llm.py) whose
answers come from the scenario's ground truth. LABELLED AS SUCH in every report: it measures
everything but the LLM's judgement (what reaches each prompt, the gates, scopes, ranking).

- extract: the event's exact memory (its topic by kind);
- transform_with_context: a new fact whose attribute an existing memory states is a
  duplicate (same value: delete the new one) or supersedes it (other value: rewrite the
  existing memory with the new content, delete the new one); anything else is kept;
- extract_reconcile (extract and reconcile in one call): the two answers above, composed;
- reconsolidate: the same attribute and value is a `match`, another value a `contradict`
  quoting the input sentence; anything else `unrelated`;
- consolidate: the rule of the theme most of the episodes belong to, resting on those.
"""

from __future__ import annotations

import json
from typing import Any

from bench.dynamics.scenario import Scenario
from bench.dynamics.themes import THEMES
from tests.support.scripted_llm import ScriptedLLMServer

EPISODE_TOPIC, FACT_TOPIC = "Episodes", "Facts"


class Oracle:
    def __init__(self, scenario: Scenario) -> None:
        self.by_text = {e.text: e for e in scenario.events}
        self.facts: dict[str, tuple[str, str]] = {}  # memory content -> (attribute, value)
        for attribute, spec in scenario.attributes.items():
            for value in spec["values"]:  # type: ignore[attr-defined]
                self.facts[str(spec["memory"]).format(v=value)] = (attribute, value)
        self.themes = {e: t for t in THEMES for e in t.episodes}

    def install(self, server: ScriptedLLMServer) -> None:
        server.script("extract", self.extract)
        server.script("transform_with_context", self.reconcile)
        server.script("extract_reconcile", self.extract_reconcile)
        server.script("reconsolidate", self.gate)
        server.script("consolidate", self.consolidate)

    def extract(self, request: dict[str, Any]) -> dict[str, Any]:
        out = []
        for unit in _body(request)["input"]:
            event = self.by_text.get(unit)
            if event is not None and event.memory:
                topic = EPISODE_TOPIC if event.kind == "episode" else FACT_TOPIC
                out.append({"topic": topic, "content": event.memory})
        return {"memories": out}

    def extract_reconcile(self, request: dict[str, Any]) -> dict[str, Any]:
        """extract, then reconcile the extracted memories with the shown ones: the new
        memories reconcile keeps, and its verdicts on the existing ones."""
        memories = self.extract(request)["memories"]
        body = _body(request)
        new = [{"index": i, **m} for i, m in enumerate(memories)]
        verdicts = self._reconcile(body["existing"], new)
        kept = {d["index"] for d in verdicts["new"] if d["action"] == "keep"}
        return {
            "memories": [m for i, m in enumerate(memories) if i in kept],
            "existing": verdicts["existing"],
        }

    def reconcile(self, request: dict[str, Any]) -> dict[str, Any]:
        body = _body(request)
        return self._reconcile(body["existing"], body["new"])

    def _reconcile(
        self, shown: list[dict[str, Any]], fresh: list[dict[str, Any]]
    ) -> dict[str, Any]:
        body = {"existing": shown, "new": fresh}
        existing, new = [], []
        rewritten: set[str] = set()
        for item in body["new"]:
            fact = self.facts.get(item["content"])
            same = [
                m
                for m in body["existing"]
                if fact and self.facts.get(m["content"], ("",))[0] == fact[0]
            ]
            writable = [m for m in same if not m.get("read_only") and m["id"] not in rewritten]
            if not same:
                new.append({"index": item["index"], "action": "keep"})
            elif any(self.facts[m["content"]] == fact for m in same):
                new.append({"index": item["index"], "action": "delete"})
            elif writable:
                target = writable[0]
                rewritten.add(target["id"])
                existing.append(
                    {"id": target["id"], "action": "rewrite", "content": item["content"]}
                )
                new.append({"index": item["index"], "action": "delete"})
            else:
                new.append({"index": item["index"], "action": "keep"})
        return {"existing": existing, "new": new}

    def gate(self, request: dict[str, Any]) -> dict[str, Any]:
        body = _body(request)
        verdicts = []
        for memory in body["recalled"]:
            fact = self.facts.get(memory["content"])
            verdict: dict[str, Any] = {"id": memory["id"], "decision": "unrelated"}
            for item in body["new"]:
                other = self.facts.get(item["content"])
                if fact is None or other is None or other[0] != fact[0]:
                    continue
                quote = next((u for u in body["input"] if other[1] in u), "")
                if other == fact:
                    verdict = {"id": memory["id"], "decision": "match", "evidence": quote,
                               "covers": [item["index"]]}  # fmt: skip
                else:
                    verdict = {"id": memory["id"], "decision": "contradict", "evidence": quote,
                               "content": item["content"], "covers": [item["index"]]}  # fmt: skip
                break
            verdicts.append(verdict)
        return {"verdicts": verdicts}

    def consolidate(self, request: dict[str, Any]) -> dict[str, Any]:
        body = _body(request)
        episodes = body["new_episodes"] + body.get("episodes_it_rests_on", [])
        themes = [self.themes.get(e["content"]) for e in episodes]
        known = [t for t in themes if t is not None]
        if not known:
            return {"rule": None, "used": []}
        theme = max(set(known), key=lambda t: (known.count(t), t.name))
        used = [e["id"] for e in body["new_episodes"] if self.themes.get(e["content"]) == theme]
        return {"rule": theme.rule, "used": used}


def _body(request: dict[str, Any]) -> dict[str, Any]:
    user = next(m for m in request["messages"] if m["role"] == "user")
    body: dict[str, Any] = json.loads(user["content"])
    return body
