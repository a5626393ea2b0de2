"""Provenance of a memory: each version with the run that wrote it and that run's input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import MemoryStatus, RunState
from mnemo.domain.provenance import Provenance, RunSource, VersionProvenance
from mnemo.store.schema import memories, memory_sources, memory_versions, runs
from mnemo.store.tenancy import memory_owner_filter

_STATE = ("version", "operation", "content", "event_time", "event_time_end", "written_by_run_id")


async def provenance(
    conn: AsyncConnection, project: str, group: GroupConfig, user_id: str | None, memory_id: str
) -> Provenance | None:
    """Every version, oldest first, the current state last; None when the caller may not see
    the memory (the same rule as reading it by id)."""
    current = (
        await conn.execute(
            select(
                memories.c.status, memories.c.updated_at, *(memories.c[n] for n in _STATE)
            ).where(memories.c.id == memory_id, memory_owner_filter(project, group, user_id))
        )
    ).first()
    if current is None:
        return None
    earlier = (
        await conn.execute(
            select(
                memory_versions.c.valid_from,
                memory_versions.c.valid_to,
                *(memory_versions.c[n] for n in _STATE),
            )
            .where(memory_versions.c.memory_id == memory_id)
            .order_by(memory_versions.c.version)
        )
    ).all()
    states = [
        *(r._mapping for r in earlier),
        {**current._mapping, "valid_from": current.updated_at},
    ]
    sources = await _sources_by_pass(conn, memory_id)
    writers = (s["written_by_run_id"] for s in states if s["written_by_run_id"])
    run_ids = list(dict.fromkeys(w for w in writers if w not in sources))
    run_rows = await _runs(conn, project, run_ids)
    return Provenance(
        memory_id=memory_id,
        status=MemoryStatus(current.status),
        run_ids=run_ids,
        versions=[_version(s, run_rows, sources) for s in states],
    )


async def _sources_by_pass(conn: AsyncConnection, rule_id: str) -> dict[str, list[str]]:
    """The episodes a consolidated rule was made from, by the consolidation pass that
    linked them (a pass writes the rule's version under its pass id), oldest link first."""
    rows = await conn.execute(
        select(memory_sources.c.pass_id, memory_sources.c.source_id)
        .where(memory_sources.c.rule_id == rule_id)
        .order_by(memory_sources.c.linked_at, memory_sources.c.source_id)
    )
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row.pass_id, []).append(row.source_id)
    return out


def _version(
    state: Mapping[str, Any],
    run_rows: Mapping[str, Mapping[str, Any]],
    sources: Mapping[str, list[str]],
) -> VersionProvenance:
    run_id = state["written_by_run_id"]
    return VersionProvenance(
        sources=sources.get(run_id, []) if run_id else [],
        version=state["version"],
        operation=state["operation"],
        content=state["content"],
        valid_from=state["valid_from"],
        valid_to=state.get("valid_to"),
        event_time=state["event_time"],
        event_time_end=state["event_time_end"],
        run_id=run_id,
        # A consolidation pass is not a run: its version names the pass and its sources.
        run=run_source(run_id, run_rows.get(run_id)) if run_id and run_id not in sources else None,
    )


async def _runs(
    conn: AsyncConnection, project: str, run_ids: list[str]
) -> dict[str, Mapping[str, Any]]:
    if not run_ids:
        return {}
    rows = await conn.execute(
        select(runs).where(runs.c.project == project, runs.c.run_id.in_(run_ids))
    )
    return {row.run_id: dict(row._mapping) for row in rows}


def run_source(run_id: str, row: Mapping[str, Any] | None) -> RunSource:
    """A run and its raw input. A raw input that is absent, empty or no longer reads as an
    input (erased, redacted) is reported as redacted, never as an error."""
    if row is None:
        return RunSource(run_id=run_id, raw_input_state="missing")
    raw = row.get("raw_input")
    kept: dict[str, Any] | None = None
    if isinstance(raw, dict) and raw:
        try:
            AddInput.model_validate(raw)
            kept = raw
        except ValidationError:
            kept = None
    return RunSource(
        run_id=run_id,
        raw_input_state="retained" if kept is not None else "redacted",
        raw_input=kept,
        status=RunState(row["status"]),
        input_type=row["input_type"],
        created_at=row["created_at"],
        produced_by=row.get("produced_by"),
    )
