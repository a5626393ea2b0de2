"""Wire models of the gateway: the Engram v1 shapes plus mnemo's extensions.

Requests reuse `mnemo.domain.requests`; responses subclass the domain models only to
render every timestamp as RFC 3339 in UTC with a trailing 'Z'.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field, PlainSerializer, field_validator

from mnemo.domain.erasure import ErasureReport
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import (
    EVENT_TIME,
    EVENT_TIME_END,
    CommittedOperation,
    CommittedOperations,
    Memory,
    MemoryVersion,
    Run,
    RunState,
)
from mnemo.domain.paging import NEXT_CURSOR
from mnemo.domain.provenance import Provenance, RunSource, VersionProvenance
from mnemo.domain.reconsolidation import GateDecision
from mnemo.domain.requests import AddRequest, ListRequest


def rfc3339(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


UtcTime = Annotated[datetime, PlainSerializer(rfc3339, return_type=str)]


def _default_group(value: object) -> object:
    return "default" if value is None else value


class AddBody(AddRequest):
    """POST /v1/memories. A null or absent `group` means "default"."""

    _group = field_validator("group", mode="before")(_default_group)


class ListBody(ListRequest):
    """POST /v1/memories/list. A null or absent `group` means "default"."""

    _group = field_validator("group", mode="before")(_default_group)


class AddResponse(BaseModel):
    run_id: str
    status: RunState
    error: str | None = None


class MemoryOut(Memory):
    created_at: UtcTime
    updated_at: UtcTime
    event_time: UtcTime | None = Field(default=None, description=EVENT_TIME)
    event_time_end: UtcTime | None = Field(default=None, description=EVENT_TIME_END)


class MemoryPage(BaseModel):
    memories: list[MemoryOut]
    total: int
    next_cursor: str | None = Field(default=None, description=NEXT_CURSOR)


class CommittedOperationOut(CommittedOperation):
    committed_at: UtcTime


class CommittedOperationsOut(CommittedOperations):
    # Narrower element types than the base's, for serialization only.
    created: list[CommittedOperationOut] = []  # type: ignore[assignment]
    updated: list[CommittedOperationOut] = []  # type: ignore[assignment]
    deleted: list[CommittedOperationOut] = []  # type: ignore[assignment]


class RunOut(Run):
    created_at: UtcTime
    updated_at: UtcTime
    committed_operations: CommittedOperationsOut | None = None
    # mnemo extension, present only when a reconsolidation gate ran (Engram's shape otherwise).
    reconsolidation: list[GateDecision] | None = Field(
        default=None, exclude_if=lambda value: value is None
    )


class MemoryVersionOut(MemoryVersion):
    valid_from: UtcTime
    valid_to: UtcTime
    event_time: UtcTime | None = Field(default=None, description=EVENT_TIME)
    event_time_end: UtcTime | None = Field(default=None, description=EVENT_TIME_END)


class MemoryHistory(BaseModel):
    """mnemo extension: prior versions of a memory, oldest first, with the runs that changed it."""

    memory_id: str
    versions: list[MemoryVersionOut]


class RunSourceOut(RunSource):
    created_at: UtcTime | None = None


class VersionProvenanceOut(VersionProvenance):
    valid_from: UtcTime
    valid_to: UtcTime | None = None
    event_time: UtcTime | None = Field(default=None, description=EVENT_TIME)
    event_time_end: UtcTime | None = Field(default=None, description=EVENT_TIME_END)
    run: RunSourceOut | None = None


class ProvenanceOut(Provenance):
    """mnemo extension: every version of a memory, oldest first and the current state last,
    with the run that wrote it, that run's raw input while it is retained, and (for a
    consolidated version) the memories it was made from."""

    versions: list[VersionProvenanceOut]  # type: ignore[assignment]


class MemorySources(BaseModel):
    """mnemo extension: the episodes a rule was consolidated from, oldest first (those the
    caller may see; each with its status and `consolidated_into`)."""

    memory_id: str
    sources: list[MemoryOut]


class ConsolidationScopeOut(BaseModel):
    user_id: str | None
    properties: dict[str, str]
    new_episodes: int
    first_new_at: UtcTime | None
    last_new_at: UtcTime | None
    last_pass_at: UtcTime | None
    last_error: str | None


class ConsolidationStatus(BaseModel):
    """mnemo extension: a group's consolidation scopes, newest first: episodes new since
    each scope's last pass, when it last ran, and its last error."""

    group: str
    scopes: list[ConsolidationScopeOut]


class TopicScoping(BaseModel):
    user_scoped: bool
    scope_properties: list[str]


class TopicSummary(BaseModel):
    topic_name: str
    description: str
    is_bounded: bool
    scoping: TopicScoping


class GroupSummary(BaseModel):
    group_id: str
    name: str
    topics: list[TopicSummary]

    @classmethod
    def of(cls, group: GroupConfig) -> GroupSummary:
        return cls(
            group_id=group.name,
            name=group.name,
            topics=[
                TopicSummary(
                    topic_name=t.name,
                    description=t.description,
                    is_bounded=t.is_bounded,
                    scoping=TopicScoping(
                        user_scoped=t.scoping.user_scoped,
                        scope_properties=list(t.scoping.scope_properties),
                    ),
                )
                for t in group.committable_topics
            ],
        )


class GroupList(BaseModel):
    groups: list[GroupSummary]


class Erased(ErasureReport):
    """mnemo extension: what erasing a user removed, by kind. `erased` counts memories (as
    it always did); `runs_redacted` counts the user's runs whose content is now gone, of
    which `runs_stopped` were still queued or in flight and end `failed`. `bus_records` are
    the embedded mode's queued pipeline records; in the distributed mode the stage services
    drop the user's queued records as they reach them."""


class Health(BaseModel):
    status: str


class EngramHealth(BaseModel):
    """Engram's `GET /health` body, e.g. {"status": "healthy", "service": "mnemo"}."""

    status: str
    service: str


class ReadinessCheck(BaseModel):
    name: str  # database, broker, worker_processes, workers, llm, embedder, ...
    ok: bool
    detail: str
    # Reported, but a failure does not make the server unready (the LLM and embedder).
    advisory: bool = False


class WorkerHeartbeat(BaseModel):
    worker_id: str
    role: str  # "embedded", or a stage service's name
    host: str
    pid: int
    heartbeat_age_seconds: float


class Readiness(BaseModel):
    """`/readyz` when ready (200); when not, the same fields extend a 503 problem."""

    status: str = "ready"
    checks: list[ReadinessCheck]
    workers: list[WorkerHeartbeat]
    # Reported, never judged: a long pipeline is not an outage.
    oldest_running_run_age_seconds: float | None


class RunFailure(BaseModel):
    run_id: str
    group_id: str
    user_id: str | None = None
    created_at: datetime
    updated_at: datetime  # when it failed
    error: str | None = None


class ProjectStatus(BaseModel):
    project: str
    recent_failures: list[RunFailure]

    @classmethod
    def of(cls, project: str, failed: Sequence[Any]) -> ProjectStatus:
        """From the project's latest failed runs (`Granted.failed_runs`)."""
        failures = [RunFailure.model_validate(r, from_attributes=True) for r in failed]
        return cls(project=project, recent_failures=failures)
