"""Pipelines: chains of steps declared per group in YAML or JSON.

Several entry points (one per input type) may converge into one chain; every chain ends
in a `commit`, the only step that persists.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mnemo.domain.inputs import InputType
from mnemo.errors import MnemoError

_ID = r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$"


class MissingStep(MnemoError, LookupError):
    """A run, flush or buffer names a step the pipeline does not have (it changed)."""


class _Step(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=_ID)
    next: str | None = None
    # A step that declares an input type is an entry point for adds of that type.
    input_type: InputType | None = None


class ExtractStep(_Step):
    kind: Literal["extract"] = "extract"
    input_type: InputType
    instructions: str = ""


class TransformStep(_Step):
    kind: Literal["transform"] = "transform"
    instructions: str
    # Topics the transform may write; empty means any topic of the group.
    output_topics: tuple[str, ...] = ()


class TransformWithContextStep(_Step):
    kind: Literal["transform_with_context"] = "transform_with_context"
    instructions: str = (
        "Keep existing memories that are still true. When a new memory changes an existing "
        "one, rewrite the existing one so it states the current fact and briefly keeps the "
        "previous one (e.g. 'used to ..., now ...'), and delete the new one. Delete new "
        "memories that repeat existing ones."
    )
    context_limit: int = Field(default=10, ge=1, le=100)
    # The LLM is called only when some related memory is at least this similar (cosine) to a
    # new one; unset: the `reconcile_min_similarity` setting. -1 always calls it.
    min_similarity: float | None = Field(default=None, ge=-1.0, le=1.0)


# A time trigger longer than a century could not be added to any instant of the accepted
# range (mnemo.domain.instant) without leaving it.
MAX_TRIGGER_SECONDS = 36_500 * 86_400.0


class BufferTriggers(BaseModel):
    """A buffer flushes when any configured trigger fires."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    count: int | None = Field(default=None, ge=1)
    since_first_seconds: float | None = Field(default=None, gt=0, le=MAX_TRIGGER_SECONDS)
    idle_seconds: float | None = Field(default=None, gt=0, le=MAX_TRIGGER_SECONDS)
    topics_present: tuple[str, ...] = ()
    # Fixed interval aligned to the epoch in UTC: 86400 flushes at midnight UTC.
    every_seconds: float | None = Field(default=None, gt=0, le=MAX_TRIGGER_SECONDS)

    @model_validator(mode="after")
    def _some_trigger(self) -> BufferTriggers:
        if not any(
            (
                self.count,
                self.since_first_seconds,
                self.idle_seconds,
                self.topics_present,
                self.every_seconds,
            )
        ):
            raise ValueError("a buffer needs at least one trigger")
        return self


class BufferStep(_Step):
    kind: Literal["buffer"] = "buffer"
    mode: Literal["batch", "sliding_window"] = "batch"
    triggers: BufferTriggers | None = None
    # sliding_window: how many earlier inputs of the scope travel along as context.
    window: int = Field(default=5, ge=1, le=100)

    @model_validator(mode="after")
    def _mode_fields(self) -> BufferStep:
        if self.mode == "batch" and self.triggers is None:
            raise ValueError(f"buffer step '{self.id}' in batch mode needs triggers")
        return self


class CommitStep(_Step):
    """Persists its batch. A commit with `next` also forwards what it committed, which lets
    a pipeline keep every item and later roll them up (e.g. a daily summary)."""

    kind: Literal["commit"] = "commit"


Step = Annotated[
    ExtractStep | TransformStep | TransformWithContextStep | BufferStep | CommitStep,
    Field(discriminator="kind"),
]


class Pipeline(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: tuple[Step, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _well_formed(self) -> Pipeline:
        ids = [s.id for s in self.steps]
        if len(set(ids)) != len(ids):
            raise ValueError("step ids must be unique")
        by_id = {s.id: s for s in self.steps}
        for step in self.steps:
            if step.next is not None and step.next not in by_id:
                raise ValueError(f"step '{step.id}' names unknown next step '{step.next}'")
            self._check_chain(step, by_id)
        entry_types = [s.input_type for s in self.steps if s.input_type is not None]
        if len(set(entry_types)) != len(entry_types):
            raise ValueError("each input type may have only one entry step")
        if not entry_types:
            raise ValueError("a pipeline needs at least one entry step (a step with input_type)")
        return self

    @staticmethod
    def _check_chain(start: _Step, by_id: dict[str, Step]) -> None:
        seen: set[str] = set()
        step: _Step = start
        after_extract = start.kind == "extract"  # type: ignore[attr-defined]
        while True:
            if step.id in seen:
                raise ValueError(f"the chain from step '{start.id}' has a cycle")
            seen.add(step.id)
            kind = step.kind  # type: ignore[attr-defined]
            if kind == "extract":
                after_extract = True
            elif isinstance(step, BufferStep) and step.mode == "sliding_window" and after_extract:
                raise ValueError(f"sliding-window buffer '{step.id}' must come before extract")
            if step.next is None:
                if kind != "commit":
                    raise ValueError(f"the chain from step '{start.id}' does not end in commit")
                return
            step = by_id[step.next]

    def index_of(self, step_id: str) -> int:
        for index, step in enumerate(self.steps):
            if step.id == step_id:
                return index
        raise MissingStep(f"step '{step_id}' is not in the pipeline")

    def step(self, step_id: str) -> Step:
        return self.steps[self.index_of(step_id)]

    def entry_for(self, input_type: InputType, root: str | None = None) -> Step:
        """The step an add starts from: `root` if named, else the input type's entry."""
        if root is not None:
            if root not in {s.id for s in self.steps}:
                raise LookupError(f"root step '{root}' is not in the pipeline")
            return self.step(root)
        for step in self.steps:
            if step.input_type == input_type:
                return step
        raise LookupError(f"the pipeline has no entry step for input type '{input_type}'")

    def following(self, step: Step) -> Step | None:
        return self.step(step.next) if step.next else None
