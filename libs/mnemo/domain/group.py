"""Groups: an isolated set of topics plus the pipeline that maintains them."""

from __future__ import annotations

import hashlib
import json
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mnemo.domain.consolidation import ConsolidationConfig, consolidation_problems
from mnemo.domain.pipeline import (
    BufferStep,
    ExtractStep,
    MissingStep,
    Pipeline,
    Step,
    TransformStep,
    TransformWithContextStep,
)
from mnemo.domain.reconsolidation import ReconsolidationConfig
from mnemo.domain.retention import RetentionPolicy
from mnemo.domain.topics import Topic


def _without_negative_zero(value: object) -> object:
    """-0.0 as 0.0: Postgres' JSONB keeps no sign on zero, and a tag must not change when a
    stored group is read back."""
    if isinstance(value, float):
        return value + 0.0
    if isinstance(value, dict):
        return {k: _without_negative_zero(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_negative_zero(v) for v in value]
    return value


class GroupConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-\.]{0,63}$")
    description: str = ""
    topics: tuple[Topic, ...] = Field(min_length=1)
    pipeline: Pipeline
    template: str | None = None
    retention: RetentionPolicy = Field(default_factory=RetentionPolicy)
    # Memory over time (mnemo's own group endpoints show them; GET /v1/groups does not).
    consolidation: ConsolidationConfig | None = None
    reconsolidation: ReconsolidationConfig | None = None

    @model_validator(mode="after")
    def _topics_consistent(self) -> GroupConfig:
        names = [t.name for t in self.topics]
        if len(set(names)) != len(names):
            raise ValueError("topic names must be unique within a group")
        known = set(names)
        for step in self.pipeline.steps:
            referenced: tuple[str, ...] = ()
            if isinstance(step, BufferStep) and step.triggers:
                referenced = step.triggers.topics_present
            elif isinstance(step, TransformStep):
                referenced = step.output_topics
            unknown = [t for t in referenced if t not in known]
            if unknown:
                raise ValueError(f"step '{step.id}' names unknown topics: {', '.join(unknown)}")
        if self.consolidation is not None:
            problems = consolidation_problems(self.consolidation, {t.name: t for t in self.topics})
            if problems:
                raise ValueError("; ".join(problems))
        if self.reconsolidation is not None and not any(
            isinstance(s, TransformWithContextStep) for s in self.pipeline.steps
        ):
            raise ValueError(
                "reconsolidation: the gate runs in transform_with_context, and the pipeline "
                "has no such step"
            )
        return self

    def etag(self) -> str:
        """The configuration's HTTP entity tag (quoted, strong): a digest of its stored form,
        so it changes exactly when a save changes something."""
        dumped = _without_negative_zero(self.model_dump(mode="json"))
        canonical = json.dumps(dumped, sort_keys=True, separators=(",", ":"))
        return '"' + hashlib.sha256(canonical.encode()).hexdigest()[:32] + '"'

    def same_shape(self, other: GroupConfig) -> bool:
        """Same topics, pipeline and memory-over-time sections (what a template decides)."""
        fields = ("topics", "pipeline", "consolidation", "reconsolidation")
        return all(getattr(self, f) == getattr(other, f) for f in fields)

    def topic(self, name: str) -> Topic:
        for topic in self.topics:
            if topic.name == name:
                return topic
        raise LookupError(f"topic '{name}' is not in group '{self.name}'")

    def step(self, step_id: str) -> Step:
        """The pipeline's step `step_id`, for a run, flush or buffer that named it earlier.

        Raises MissingStep (naming the step and the group) when the group was replaced
        since and no longer has it: the run fails with that error and can be retried.
        """
        try:
            return self.pipeline.step(step_id)
        except MissingStep:
            raise MissingStep(
                f"step '{step_id}' is no longer in the pipeline of group '{self.name}' (the "
                "group was changed while the run was in flight); retry the run to send it "
                "through the current pipeline"
            ) from None

    def has_topic(self, name: str) -> bool:
        return any(t.name == name for t in self.topics)

    @property
    def scope_property_keys(self) -> set[str]:
        return {k for t in self.topics for k in t.scoping.scope_properties}

    @property
    def needs_user(self) -> bool:
        return any(t.scoping.user_scoped for t in self.topics)

    @property
    def committable_topics(self) -> tuple[Topic, ...]:
        return tuple(t for t in self.topics if not t.internal)

    def extract_steps(self) -> tuple[ExtractStep, ...]:
        return tuple(s for s in self.pipeline.steps if isinstance(s, ExtractStep))


class GroupSource(Protocol):
    """Where steps read a group's configuration (the engine's cache of the groups table)."""

    async def get(self, project: str, name: str) -> GroupConfig:
        """The group `name` of `project`; raises `NotFound` when there is none."""
        ...
