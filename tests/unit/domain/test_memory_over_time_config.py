"""Validation of a group's consolidation: and reconsolidation: sections."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from mnemo.domain.consolidation import ConsolidationScope, EpisodeScope
from mnemo.domain.group import GroupConfig
from mnemo.domain.reconsolidation import parse_duration
from mnemo.domain.templates import group_from_document

BASE: dict[str, Any] = {
    "topics": [
        {"name": "Episodes", "description": "What happened.",
         "scoping": {"user_scoped": True, "scope_properties": ["desk_id"]}},
        {"name": "Rules", "description": "Lessons.",
         "scoping": {"user_scoped": True, "scope_properties": ["desk_id"]}},
        {"name": "Profile", "description": "The user.", "scoping": {"user_scoped": True},
         "is_bounded": True},
        {"name": "DeskNotes", "description": "Notes per desk.",
         "scoping": {"scope_properties": ["desk_id"]}},
    ],
    "pipeline": {"steps": [
        {"id": "x", "kind": "extract", "input_type": "string", "next": "r"},
        {"id": "r", "kind": "transform_with_context", "next": "c"},
        {"id": "c", "kind": "commit"},
    ]},
}  # fmt: skip


def group(**sections: Any) -> GroupConfig:
    document = copy.deepcopy(BASE)
    document.update(sections)
    return group_from_document("g", document)


def refused(**sections: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        group(**sections)
    return str(caught.value)


def test_a_valid_consolidation_defaults_to_the_rule_topics_scope() -> None:
    g = group(consolidation={"episode_topics": ["Episodes"], "rule_topic": "Rules"})
    assert g.consolidation is not None
    topics = {t.name: t for t in g.topics}
    assert g.consolidation.scope_of(topics) == ConsolidationScope(
        user=True, properties=("desk_id",)
    )
    assert g.consolidation.effective_triggers.count == 3
    assert g.consolidation.sources == "consolidate"
    assert "consolidation" in g.model_dump(mode="json")


@pytest.mark.parametrize(
    "section, message",
    [
        ({"episode_topics": ["Nope"], "rule_topic": "Rules"}, "unknown topics: Nope"),
        ({"episode_topics": ["Episodes"], "rule_topic": "Episodes"}, "must not be one of"),
        ({"episode_topics": ["Profile"], "rule_topic": "Rules"}, "'Profile' is bounded"),
        ({"episode_topics": ["Episodes"], "rule_topic": "Rules", "scope": "user"},
         "consolidation.scope: it works per user, but rule topic 'Rules' is scoped per user and desk_id"),
        ({"episode_topics": ["Episodes"], "rule_topic": "DeskNotes"},
         "consolidation.across_users"),
        ({"episode_topics": ["DeskNotes"], "rule_topic": "Rules"},
         "episode topic 'DeskNotes' is not user-scoped"),
        ({"episode_topics": ["Episodes"], "rule_topic": "Rules", "min_episodes": 1},
         "min_episodes"),
        ({"episode_topics": ["Episodes"], "rule_topic": "Rules", "sources": "shred"}, "sources"),
        ({"episode_topics": ["Episodes"], "rule_topic": "Rules",
          "triggers": {"topics_present": ["Episodes"]}}, "topics_present does not apply"),
        ({"episode_topics": ["Episodes"], "rule_topic": "Rules", "triggers": {}},
         "at least one trigger"),
    ],
)  # fmt: skip
def test_an_invalid_consolidation_is_refused_naming_the_field(
    section: dict[str, Any], message: str
) -> None:
    assert message in refused(consolidation=section)


def test_across_users_allows_a_shared_rule_per_desk() -> None:
    g = group(
        consolidation={
            "episode_topics": ["Episodes"],
            "rule_topic": "DeskNotes",
            "across_users": True,
        }
    )
    assert g.consolidation is not None and g.consolidation.across_users


def test_reconsolidation_reads_durations_and_needs_a_reconcile_step() -> None:
    g = group(reconsolidation={"labile_window": "15m", "only_recalled": True})
    assert g.reconsolidation is not None and g.reconsolidation.labile_window == 900.0
    assert parse_duration("90s") == 90.0 and parse_duration("1h") == 3600.0
    assert parse_duration(30) == 30
    assert "labile_window" in refused(reconsolidation={"labile_window": "soon"})
    assert "labile_window" in refused(reconsolidation={"labile_window": "48h"})
    no_reconcile = copy.deepcopy(BASE)
    no_reconcile["pipeline"]["steps"] = [
        {"id": "x", "kind": "extract", "input_type": "string", "next": "c"},
        {"id": "c", "kind": "commit"},
    ]
    with pytest.raises(ValidationError, match="no such step"):
        group_from_document("g", {**no_reconcile, "reconsolidation": {}})


def test_episode_scopes_key_by_the_consolidation_scope_only() -> None:
    spec = ConsolidationScope(user=False, properties=("desk_id",))
    a = EpisodeScope.of("p", "g", spec, "ann", {"desk_id": "d1", "session": "s1"})
    b = EpisodeScope.of("p", "g", spec, "bob", {"desk_id": "d1", "session": "s2"})
    assert a == b and a.key == b.key and a.user_id is None
    assert EpisodeScope.from_payload(a.as_payload()) == a
    other = EpisodeScope.of("p", "g", spec, "ann", {"desk_id": "d2"})
    assert other.key != a.key
