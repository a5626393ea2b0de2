"""Consolidation: a group's repeated episodes lifted into one rule per cluster.

Declared in a group's `consolidation:` section (not a pipeline step). Episodes of the
`episode_topics` are grouped by the consolidation scope (per user, per scope property such as
`desk_id`, or project-wide), clustered by embedding similarity, and every cluster of at least
`min_episodes` becomes one memory of `rule_topic` through one LLM call. The rule topic must be
scoped exactly like the consolidation, so each rule lives in the scope it was learned in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mnemo.domain.pipeline import BufferTriggers
from mnemo.domain.scope import scope_key
from mnemo.domain.topics import Topic

# consolidate: sources get status `consolidated` (out of default search and list, reachable
# through the rule); keep: sources stay active and are linked; delete: sources are archived
# (deleted, history kept) once the rule holds them.
SourcePolicy = Literal["consolidate", "keep", "delete"]


class ConsolidationScope(BaseModel):
    """Where a consolidation works: per user (`user`), per value of `properties`, both, or
    neither (project-wide)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: bool = False
    properties: tuple[str, ...] = ()

    @field_validator("properties")
    @classmethod
    def _sorted(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(keys)) != len(keys):
            raise ValueError("properties must not repeat a key")
        return tuple(sorted(keys))

    def describe(self) -> str:
        parts = (["user"] if self.user else []) + list(self.properties)
        return "per " + " and ".join(parts) if parts else "project-wide"


class ConsolidationConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    episode_topics: tuple[str, ...] = Field(min_length=1)
    rule_topic: str
    # "user", "project" or {user, properties}; unset: the rule topic's own scoping.
    scope: ConsolidationScope | None = None
    # A scope without `user` over user-scoped episodes lifts several users' episodes into one
    # shared rule: allowed only when said explicitly.
    across_users: bool = False
    min_episodes: int = Field(default=3, ge=2, le=100)
    # Average-linkage threshold on cosine similarity of the stored episode embeddings.
    # 0.6 with the local model: the README's luthier episodes are 0.63-0.66 apart, texts
    # on other subjects 0.4-0.57.
    similarity: float = Field(default=0.6, ge=-1.0, le=1.0)
    # At most this many pending episodes (the newest) are clustered in one pass.
    max_episodes: int = Field(default=200, ge=2, le=1000)
    # When a scope's pass runs, over its episodes new since the last pass; the buffer's
    # vocabulary (count, since_first_seconds, idle_seconds, every_seconds). Unset: count =
    # min_episodes.
    triggers: BufferTriggers | None = None
    sources: SourcePolicy = "consolidate"
    instructions: str = Field(default="", max_length=4000)

    @field_validator("scope", mode="before")
    @classmethod
    def _named_scope(cls, value: Any) -> Any:
        if value == "user":
            return {"user": True}
        if value == "project":
            return {}
        return value

    @model_validator(mode="after")
    def _own_fields(self) -> ConsolidationConfig:
        if len(set(self.episode_topics)) != len(self.episode_topics):
            raise ValueError("episode_topics must not repeat a topic")
        if self.rule_topic in self.episode_topics:
            raise ValueError("rule_topic must not be one of the episode_topics")
        if self.triggers is not None and self.triggers.topics_present:
            raise ValueError("triggers.topics_present does not apply to consolidation")
        return self

    @property
    def effective_triggers(self) -> BufferTriggers:
        return self.triggers or BufferTriggers(count=self.min_episodes)

    def scope_of(self, topics: Mapping[str, Topic]) -> ConsolidationScope:
        """The declared scope, or the rule topic's scoping when none is declared."""
        if self.scope is not None:
            return self.scope
        rule = topics[self.rule_topic].scoping
        return ConsolidationScope(user=rule.user_scoped, properties=rule.scope_properties)


def consolidation_problems(config: ConsolidationConfig, topics: Mapping[str, Topic]) -> list[str]:
    """What makes `config` unusable with these topics, each naming its field."""
    unknown = [t for t in (*config.episode_topics, config.rule_topic) if t not in topics]
    if unknown:
        return [f"consolidation names unknown topics: {', '.join(unknown)}"]
    problems = []
    for name in (config.rule_topic, *config.episode_topics):
        topic = topics[name]
        if topic.is_bounded or topic.internal:
            kind = "bounded" if topic.is_bounded else "internal"
            problems.append(f"consolidation: topic '{name}' is {kind}; episodes and rules are not")
    scope = config.scope_of(topics)
    rule = topics[config.rule_topic].scoping
    if rule.user_scoped != scope.user or set(rule.scope_properties) != set(scope.properties):
        problems.append(
            f"consolidation.scope: it works {scope.describe()}, but rule topic "
            f"'{config.rule_topic}' is scoped {_describe(rule.user_scoped, rule.scope_properties)}"
            "; they must match, so each rule lives in the scope it was learned in"
        )
    for name in config.episode_topics:
        scoping = topics[name].scoping
        if scope.user and not scoping.user_scoped:
            problems.append(
                f"consolidation.scope: it works per user, but episode topic '{name}' is not "
                "user-scoped"
            )
        missing = [k for k in scope.properties if k not in scoping.scope_properties]
        if missing:
            problems.append(
                f"consolidation.scope: episode topic '{name}' is not scoped by {', '.join(missing)}"
            )
        if not scope.user and scoping.user_scoped and not config.across_users:
            problems.append(
                f"consolidation.across_users: a consolidation {scope.describe()} over the "
                f"user-scoped topic '{name}' would lift several users' episodes into one shared "
                "rule; set across_users: true to allow it"
            )
    return problems


def _describe(user: bool, properties: tuple[str, ...]) -> str:
    return ConsolidationScope(user=user, properties=properties).describe()


@dataclass(frozen=True)
class EpisodeScope:
    """One scope a group's consolidation works in: its user (per user) and property values."""

    project: str
    group: str
    user_id: str | None
    properties: Mapping[str, str]

    @property
    def key(self) -> str:
        """Its ordering key: passes of one scope run one at a time, in order (a key of its
        own, distinct from the runs' scope keys)."""
        return scope_key(
            self.project, f"{self.group}#consolidation", self.user_id, self.properties,
            self.properties.keys(),
        )  # fmt: skip

    @classmethod
    def of(
        cls,
        project: str,
        group: str,
        spec: ConsolidationScope,
        user_id: str | None,
        properties: Mapping[str, str],
    ) -> EpisodeScope:
        """The scope a memory of this user and these properties belongs to."""
        return cls(
            project,
            group,
            user_id if spec.user else None,
            {k: properties[k] for k in spec.properties if k in properties},
        )

    def as_payload(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "group": self.group,
            "user_id": self.user_id,
            "properties": dict(self.properties),
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> EpisodeScope:
        return cls(payload["project"], payload["group"], payload["user_id"], payload["properties"])
