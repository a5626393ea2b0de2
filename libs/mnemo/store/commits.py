"""Commit: the only place that persists memories.

A batch's drafts are applied in the caller's transaction (search never reads them before it
commits). Applying is idempotent: a batch id that was applied before changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.consolidation import EpisodeScope
from mnemo.domain.event_time import Span
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, MemoryStatus
from mnemo.domain.scope import scoped_properties, topic_scope
from mnemo.errors import MnemoError
from mnemo.store import bounded, consolidation, reconsolidations
from mnemo.store.schema import applied_batches, memories, memory_versions


class CommitError(MnemoError, ValueError):
    """A draft cannot be committed as proposed (e.g. it lacks a scope property)."""


@dataclass
class Operations:
    """What a batch committed, per run: memory ids created, updated and deleted.
    `withdrawn`: nothing was committed because the batch held an erased user's runs."""

    by_run: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    withdrawn: bool = False
    # The memories this batch created (consolidation counts new episodes from them).
    created: list[Candidate] = field(default_factory=list)
    # Gate rewrites (reconsolidation): memory id -> None when written, else why not.
    gate: dict[str, str | None] = field(default_factory=dict)
    # Consolidation scopes whose count trigger fired with this batch (steps.commit).
    due: list[EpisodeScope] = field(default_factory=list)

    def add(self, run_id: str, kind: str, memory_id: str) -> None:
        ops = self.by_run.setdefault(run_id, {"created": [], "updated": [], "deleted": []})
        if memory_id not in ops[kind]:
            ops[kind].append(memory_id)


# Every commit runs these: built once, values bound at execution.
_CLAIM_BATCH = (
    pg_insert(applied_batches)
    .values(batch_id=bindparam("batch_id"), applied_at=bindparam("applied_at"))
    .on_conflict_do_nothing()
    .returning(applied_batches.c.batch_id)
)
_INSERT_MEMORY = insert(memories)


async def apply(
    conn: AsyncConnection,
    batch_id: str,
    project: str,
    group: GroupConfig,
    candidates: Sequence[Candidate],
    embeddings: Mapping[str, Sequence[float]],
    now: datetime,
) -> Operations | None:
    """Apply a batch's drafts (`candidates`, in order) in the caller's transaction, so no
    reader sees any of them before all are committed. Returns None when the batch was
    applied before (a redelivery): then nothing changes.

    The drafts are not written to a table first: staged and applied in one transaction,
    such rows were never visible to anyone (4 statements per commit for nothing)."""
    claimed = await conn.execute(_CLAIM_BATCH, {"batch_id": batch_id, "applied_at": now})
    if claimed.first() is None:
        return None
    ops = Operations()
    for candidate in candidates:
        if group.topic(candidate.topic).internal:
            continue  # fragments only feed later steps; they are never committed
        await _apply_one(conn, project, group, candidate, embeddings, now, ops)
    return ops


async def _apply_one(
    conn: AsyncConnection,
    project: str,
    group: GroupConfig,
    c: Candidate,
    embeddings: Mapping[str, Sequence[float]],
    now: datetime,
    ops: Operations,
) -> None:
    topic = group.topic(c.topic)
    if topic.scoping.user_scoped and c.user_id is None:
        raise CommitError(f"topic '{topic.name}' is user-scoped: a write needs user_id")
    missing = [k for k in topic.scoping.scope_properties if k not in c.properties]
    if missing:
        raise CommitError(f"topic '{topic.name}' needs properties: {', '.join(missing)}")
    scope = topic_scope(topic, c.user_id, c.properties)
    memory_id = c.memory_id
    if topic.is_bounded and c.op == "create":
        memory_id = await bounded.bounded_id(
            conn, project, group.name, topic, c.user_id, c.properties
        )
    current = None
    if memory_id is not None:
        current = (
            await conn.execute(
                select(memories)
                .where(
                    memories.c.id == memory_id,
                    memories.c.project == project,
                    memories.c.group == group.name,
                )
                .with_for_update()
            )
        ).first()
        if current is not None and c.op != "create":
            _same_scope_or_raise(current._mapping, topic.name, scope, group)
    if c.op == "delete":
        if current is not None and current.status == MemoryStatus.active:
            await archive_row(conn, current._mapping, c.run_id, now)
            ops.add(c.run_id, "deleted", current.id)
        return
    if c.gate is not None and (current is None or c.memory_id is None):
        ops.gate[c.memory_id or ""] = "the memory no longer exists"
        return
    vector = list(embeddings[c.content])
    evidence = c.span or Span(now, now)  # a candidate from before event times existed
    if current is None:
        new_id = memory_id or str(uuid.uuid4())
        await conn.execute(
            _INSERT_MEMORY,
            dict(
                id=new_id,
                project=project,
                group=group.name,
                topic=topic.name,
                user_id=c.user_id,
                # only what the topic is scoped by: the add's other properties stay in the
                # run's raw input, and never narrow or widen who finds this memory
                properties=scoped_properties(topic, c.properties),
                content=c.content,
                embedding=vector,
                status=MemoryStatus.active,
                version=1,
                run_ids=[c.run_id],
                created_at=now,
                updated_at=now,
                event_time=evidence.start,
                event_time_end=evidence.end,
                written_by_run_id=c.run_id,
                operation="created",
            ),
        )
        ops.add(c.run_id, "created", new_id)
        ops.created.append(c.model_copy(update={"memory_id": new_id}))
        await _link(conn, group, new_id, c, now)
        return
    if c.op == "update" and current.status != MemoryStatus.active:
        if c.gate is not None:
            ops.gate[current.id] = "the memory is no longer active"
        return  # deleted or consolidated since it was read: a rewrite never revives it
    if current.content == c.content and current.status == MemoryStatus.active:
        if c.gate is not None:
            ops.gate[current.id] = "restatement: the content is unchanged"
        await _link(conn, group, current.id, c, now)
        return  # nothing changed: no new version, no operation
    if c.gate is not None:
        ops.gate[current.id] = await _over_cap(conn, group, current.id, now)
        if ops.gate[current.id]:
            return
    await _keep_version(conn, current._mapping, "updated", c.run_id, now)
    # The rewritten content rests on the old evidence and the new: the range grows.
    span = evidence.union(Span(current.event_time, current.event_time_end))
    await conn.execute(
        update(memories)
        .where(memories.c.id == current.id)
        .values(
            content=c.content,
            embedding=vector,
            status=MemoryStatus.active,
            version=current.version + 1,
            updated_at=now,
            run_ids=[*current.run_ids, c.run_id][-50:],
            event_time=span.start,
            event_time_end=span.end,
            written_by_run_id=c.run_id,
            operation="updated",
        )
    )
    ops.add(c.run_id, "updated", current.id)
    await _link(conn, group, current.id, c, now)


async def _link(
    conn: AsyncConnection, group: GroupConfig, memory_id: str, c: Candidate, now: datetime
) -> None:
    """A rule (consolidation) holds its sources from the commit that writes it."""
    if c.sources:
        await consolidation.link_sources(
            conn, group, memory_id, c.sources, c.run_id, now, _keep_version
        )


async def _over_cap(
    conn: AsyncConnection, group: GroupConfig, memory_id: str, now: datetime
) -> str | None:
    """Why a gate rewrite of the (locked) memory may not be written, or None."""
    cap = group.reconsolidation.max_per_hour if group.reconsolidation else 0
    written = await reconsolidations.written_since(conn, memory_id, now - timedelta(hours=1))
    return f"cap: {cap} reconsolidations per memory per hour" if written >= cap else None


def _same_scope_or_raise(
    row: Mapping[Any, Any], topic: str, scope: Mapping[str, str], group: GroupConfig
) -> None:
    """A rewrite never crosses users or scope properties (e.g. conversations)."""
    existing = group.topic(row["topic"])
    existing_scope = topic_scope(existing, row["user_id"], row["properties"] or {})
    if row["topic"] != topic or existing_scope != dict(scope):
        raise CommitError(f"memory {row['id']} belongs to another scope and was not changed")


async def archive_row(
    conn: AsyncConnection, row: Mapping[Any, Any], run_id: str | None, now: datetime
) -> None:
    """Delete a memory (`row`, locked by the caller): out of search, its last content kept
    as a version. `run_id` is the deleting run (None: through the API)."""
    await _keep_version(conn, row, "deleted", run_id, now)
    await conn.execute(
        update(memories)
        .where(memories.c.id == row["id"])
        .values(
            status=MemoryStatus.archived,
            updated_at=now,
            version=row["version"] + 1,
            written_by_run_id=run_id,
            operation="deleted",
        )
    )


async def _keep_version(
    conn: AsyncConnection, row: Mapping[Any, Any], change: str, run_id: str | None, now: datetime
) -> None:
    """Keep the memory's current state (`row`) as a version that ends now."""
    await conn.execute(
        insert(memory_versions).values(
            memory_id=row["id"],
            project=row["project"],
            group=row["group"],
            version=row["version"],
            content=row["content"],
            valid_from=row["updated_at"],
            valid_to=now,
            change=change,
            run_id=run_id,
            status=row["status"],
            embedding=row["embedding"],
            event_time=row["event_time"],
            event_time_end=row["event_time_end"],
            written_by_run_id=row["written_by_run_id"],
            operation=row["operation"],
        )
    )
