"""The group each run uses: the full configuration, each mechanism switched off, and the
append-only baseline (extract -> commit)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

DESK_SCOPE = {"user_scoped": True, "scope_properties": ["desk_id"]}
TOPICS = [
    {"name": "Facts", "description": "Facts about the user: where they live, their job, what "
     "they prefer.", "scoping": {"user_scoped": True}},
    {"name": "Episodes", "description": "Something that happened at the user's desk: a job "
     "done, a problem seen, a fix tried and how it turned out.", "scoping": DESK_SCOPE},
    {"name": "Rules", "description": "A lesson that holds at the user's desk, learned from "
     "several episodes.", "scoping": DESK_SCOPE},
]  # fmt: skip
RECONCILE: list[dict[str, Any]] = [
    {"id": "say", "kind": "extract", "input_type": "string", "next": "reconcile"},
    {"id": "reconcile", "kind": "transform_with_context", "next": "commit"},
    {"id": "commit", "kind": "commit"},
]
APPEND_ONLY = [
    {"id": "say", "kind": "extract", "input_type": "string", "next": "commit"},
    {"id": "commit", "kind": "commit"},
]
CONSOLIDATION = {
    "episode_topics": ["Episodes"], "rule_topic": "Rules", "min_episodes": 3, "similarity": 0.6,
    "triggers": {"count": 3, "idle_seconds": 1800},
}  # fmt: skip
RECONSOLIDATION = {"labile_window": "15m", "max_per_hour": 3}


@dataclass(frozen=True)
class Variant:
    name: str
    note: str
    group: dict[str, Any]

    @property
    def consolidates(self) -> bool:
        return "consolidation" in self.group


def _group(steps: list[dict[str, Any]], **sections: Any) -> dict[str, Any]:
    return {
        "topics": copy.deepcopy(TOPICS),
        "pipeline": {"steps": copy.deepcopy(steps)},
        **sections,
    }


def _floorless() -> list[dict[str, Any]]:
    steps = copy.deepcopy(RECONCILE)
    steps[1]["min_similarity"] = -1.0
    return steps


VARIANTS = [
    Variant("append-only", "extract -> commit", _group(APPEND_ONLY)),
    Variant("full", "reconcile + gate + consolidation", _group(
        RECONCILE, consolidation=CONSOLIDATION, reconsolidation=RECONSOLIDATION)),
    Variant("no-consolidation", "", _group(RECONCILE, reconsolidation=RECONSOLIDATION)),
    Variant("no-reconsolidation", "no gate, no recalls", _group(
        RECONCILE, consolidation=CONSOLIDATION)),
    Variant("no-similarity-floor", "reconcile always asks", _group(
        _floorless(), consolidation=CONSOLIDATION, reconsolidation=RECONSOLIDATION)),
]  # fmt: skip
