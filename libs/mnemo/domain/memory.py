"""Memories, the drafts that propose them, and runs that report what was committed."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.event_time import Span
from mnemo.domain.reconsolidation import GateDecision


class RunState(StrEnum):
    running = "running"
    in_buffer = "in_buffer"
    completed = "completed"
    failed = "failed"

    @property
    def terminal(self) -> bool:
        return self in (RunState.completed, RunState.failed)


class MemoryStatus(StrEnum):
    """A committed memory is active (searchable), archived (deleted, history kept) or
    consolidated (an episode a rule now holds: out of default search and list, reachable
    through the rule's sources and with `include_consolidated`)."""

    active = "active"
    archived = "archived"
    consolidated = "consolidated"


class Candidate(BaseModel):
    """A memory on its way through a pipeline, before commit.

    `memory_id` is set when the candidate targets an existing memory (a rewrite, a
    delete, or a bounded topic's fixed id); `op` says what commit will do with it.
    """

    model_config = ConfigDict(extra="forbid")

    content: str
    topic: str
    user_id: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    run_id: str
    op: Literal["create", "update", "delete"] = "create"
    memory_id: str | None = None
    # The event-time range of the evidence (see mnemo.domain.event_time); None only for
    # candidates made before event times existed (commit then uses its own time).
    event_time: datetime | None = None
    event_time_end: datetime | None = None
    # Consolidation: the episodes a rule rests on; commit links them to the rule.
    sources: list[str] = Field(default_factory=list)
    # Reconsolidation: a rewrite the gate decided; commit enforces the hourly cap.
    gate: Literal["extend", "contradict"] | None = None

    @property
    def span(self) -> Span | None:
        return Span.of((self.event_time, self.event_time_end))

    def dated(self, span: Span | None) -> Candidate:
        """This candidate with the event-time range `span`."""
        if span is None:
            return self
        return self.model_copy(update={"event_time": span.start, "event_time_end": span.end})


EVENT_TIME = (
    "mnemo extension: when the evidence of this content happened (its messages' created_at), "
    "the start of its event-time range. `created_at` and `updated_at` are system times."
)
EVENT_TIME_END = "mnemo extension: the end of the event-time range (= event_time for one instant)."


class Memory(BaseModel):
    """A committed memory as the API returns it."""

    id: str
    project_id: str
    content: str
    topic: str
    group: str
    created_at: datetime
    updated_at: datetime
    user_id: str | None = None
    properties: dict[str, str] | None = None
    score: float | None = None
    event_time: datetime | None = Field(default=None, description=EVENT_TIME)
    event_time_end: datetime | None = Field(default=None, description=EVENT_TIME_END)
    # mnemo extensions, set only for memories that are not active (e.g. `consolidated`, with
    # the rule that holds them), so active memories keep Engram's shape.
    status: MemoryStatus | None = None
    consolidated_into: str | None = None


class MemoryVersion(BaseModel):
    """A prior state of a memory, valid from `valid_from` until `valid_to`.

    `run_id` is the run that ended this version (rewrote or deleted it; None for a delete
    through the API); provenance names the run that wrote each version."""

    memory_id: str
    version: int
    content: str
    valid_from: datetime
    valid_to: datetime
    change: Literal["updated", "deleted"]
    run_id: str | None = None
    event_time: datetime | None = Field(default=None, description=EVENT_TIME)
    event_time_end: datetime | None = Field(default=None, description=EVENT_TIME_END)


class CommittedOperation(BaseModel):
    memory_id: str
    committed_at: datetime


class CommittedOperations(BaseModel):
    created: list[CommittedOperation] = Field(default_factory=list)
    updated: list[CommittedOperation] = Field(default_factory=list)
    deleted: list[CommittedOperation] = Field(default_factory=list)


class Run(BaseModel):
    run_id: str
    status: RunState
    group_id: str
    starting_step: int
    input_type: str
    user_id: str | None = None
    error: str | None = None
    created_at: datetime
    updated_at: datetime
    committed_operations: CommittedOperations | None = None
    # mnemo extension: the run's user was erased; its input, user id and properties are gone.
    erased: bool = False
    produced_by: str | None = Field(
        default=None,
        description="mnemo extension: what produced this run's memories, set when it "
        "commits: the model's name, or 'offline' for the offline heuristics (no language "
        "model). Null before it commits.",
    )
    # mnemo extension: the reconsolidation gate's decisions of this run (None: no gate ran).
    reconsolidation: list[GateDecision] | None = None
