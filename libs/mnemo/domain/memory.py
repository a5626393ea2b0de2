"""Memories, the drafts that propose them, and runs that report what was committed."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

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
    # Consolidation: the episodes a rule rests on; commit links them to the rule.
    sources: list[str] = Field(default_factory=list)
    # Reconsolidation: a rewrite the gate decided; commit enforces the hourly cap.
    gate: Literal["extend", "contradict"] | None = None


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
    # mnemo extensions, set only for memories that are not active (e.g. `consolidated`, with
    # the rule that holds them), so active memories keep Engram's shape.
    status: MemoryStatus | None = None
    consolidated_into: str | None = None


class MemoryVersion(BaseModel):
    """A prior state of a memory, valid from `valid_from` until `valid_to`."""

    memory_id: str
    version: int
    content: str
    valid_from: datetime
    valid_to: datetime
    change: Literal["updated", "deleted"]
    run_id: str | None = None


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
    # mnemo extension: the reconsolidation gate's decisions of this run (None: no gate ran).
    reconsolidation: list[GateDecision] | None = None
