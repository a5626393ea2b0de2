"""Provenance: where each version of a memory came from (mnemo extension)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from mnemo.domain.memory import EVENT_TIME, EVENT_TIME_END, MemoryStatus, RunState

Operation = Literal["created", "updated", "deleted"]
# retained: the raw input is kept; redacted: it was erased (or no longer reads as an input);
# missing: the run's row is gone (retention) or never existed here.
RawInputState = Literal["retained", "redacted", "missing"]


class RunSource(BaseModel):
    """The run that wrote a version, and its raw input while it is retained."""

    run_id: str
    raw_input_state: RawInputState
    raw_input: dict[str, Any] | None = None
    status: RunState | None = None
    input_type: str | None = None
    created_at: datetime | None = None
    # What produced the run's memories: the model's name, or "offline" (heuristics).
    produced_by: str | None = None


class VersionProvenance(BaseModel):
    """One version of a memory: what it said, when, and what wrote it."""

    version: int
    operation: Operation
    content: str
    valid_from: datetime
    # None for the memory's current state.
    valid_to: datetime | None = None
    event_time: datetime | None = Field(default=None, description=EVENT_TIME)
    event_time_end: datetime | None = Field(default=None, description=EVENT_TIME_END)
    # None for a delete through the API (no run wrote it).
    run_id: str | None = None
    run: RunSource | None = None
    sources: list[str] = Field(
        default_factory=list,
        description="Memory ids (episodes) a consolidated version was made from; empty for "
        "versions that came from inputs. Such a version's run_id is its consolidation pass.",
    )


class Provenance(BaseModel):
    memory_id: str
    status: MemoryStatus
    # Every run that wrote a version, oldest first (memory -> runs; runs -> memories is each
    # run's committed_operations).
    run_ids: list[str]
    versions: list[VersionProvenance]
