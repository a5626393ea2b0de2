"""What every retrieval mode and list answer at one moment, to compare "as of then" with
what was answered then (both run modes use it)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mnemo.core.engine import Engine
from mnemo.domain.memory import Memory
from mnemo.domain.requests import ListRequest, SearchRequest

MODES = ("vector", "bm25", "hybrid", "fetch")
Snapshot = dict[str, Any]


def _seen(memory: Memory) -> tuple[Any, ...]:
    return (
        memory.id,
        memory.topic,
        memory.content,
        memory.score,
        memory.created_at,
        memory.updated_at,
        memory.event_time,
        memory.event_time_end,
    )


async def snapshot(
    engine: Engine,
    project: str,
    query: str,
    *,
    group: str,
    user_id: str,
    as_of: datetime | None = None,
) -> Snapshot:
    """Each mode's hits and the list (with its total), as of `as_of` (None: now)."""
    scope: dict[str, Any] = {"group": group, "user_id": user_id, "as_of": as_of}
    out: Snapshot = {}
    for mode in MODES:
        request = SearchRequest.model_validate(
            {"query": query, "retrieval_config": {"retrieval_type": mode}, **scope}
        )
        out[mode] = [_seen(m) for m in await engine.search(project, request)]
    listed, total = await engine.list_memories(project, ListRequest.model_validate(scope))
    out["list"] = ([_seen(m) for m in listed], total)
    return out


def contents(snap: Snapshot, mode: str) -> list[str]:
    hits = snap[mode][0] if mode == "list" else snap[mode]
    return [hit[2] for hit in hits]
