"""Consolidation in the store: a scope's pending episodes, its rules with their sources, the
links between them, and each scope's trigger state.

An episode is pending while it is active and no rule holds it. Linking (at commit, the only
writer) applies the group's source policy: `consolidate` sets the source's status to
`consolidated`, `delete` archives it (history kept), `keep` leaves it active.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import ColumnElement, and_, case, exists, func, insert, literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.consolidation import ConsolidationConfig, EpisodeScope
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryStatus
from mnemo.store.rows import MEMORY_COLUMNS, memory_from_row
from mnemo.store.schema import consolidation_scopes as scopes
from mnemo.store.schema import memories, memory_sources
from mnemo.store.tenancy import memory_owner_filter


@dataclass(frozen=True)
class Episode:
    id: str
    content: str
    created_at: datetime
    vector: np.ndarray


@dataclass(frozen=True)
class Rule:
    id: str
    content: str
    sources: list[Episode] = field(default_factory=list)


def _config(group: GroupConfig) -> ConsolidationConfig:
    if group.consolidation is None:
        raise ValueError(f"group '{group.name}' has no consolidation section")
    return group.consolidation


def in_scope(scope: EpisodeScope, topics: Sequence[str]) -> ColumnElement[bool]:
    """Memories of `topics` that belong to `scope` (its user when per user, its values)."""
    clauses = [
        memories.c.project == scope.project,
        memories.c.group == scope.group,
        memories.c.topic.in_(list(topics)),
    ]
    if scope.user_id is not None:
        clauses.append(memories.c.user_id == scope.user_id)
    for key, value in scope.properties.items():
        clauses.append(memories.c.properties[key].astext == value)
    return and_(*clauses)


def _linked() -> ColumnElement[bool]:
    return exists().where(memory_sources.c.source_id == memories.c.id)


async def pending_episodes(
    conn: AsyncConnection, group: GroupConfig, scope: EpisodeScope
) -> list[Episode]:
    """The scope's pending episodes, at most `max_episodes` (the newest), oldest first."""
    config = _config(group)
    rows = await conn.execute(
        select(memories.c.id, memories.c.content, memories.c.created_at, memories.c.embedding)
        .where(
            in_scope(scope, config.episode_topics),
            memories.c.status == MemoryStatus.active,
            ~_linked(),
        )
        .order_by(memories.c.created_at.desc(), memories.c.id.desc())
        .limit(config.max_episodes)
    )
    return [_episode(r) for r in reversed(rows.all())]


async def rules(conn: AsyncConnection, group: GroupConfig, scope: EpisodeScope) -> list[Rule]:
    """The scope's active rules that consolidation wrote, each with its sources."""
    config = _config(group)
    found = (
        await conn.execute(
            select(memories.c.id, memories.c.content)
            .where(
                in_scope(scope, [config.rule_topic]),
                memories.c.status == MemoryStatus.active,
                memories.c.id.in_(select(memory_sources.c.rule_id)),
            )
            .order_by(memories.c.created_at, memories.c.id)
        )
    ).all()
    if not found:
        return []
    sources = await conn.execute(
        select(
            memory_sources.c.rule_id,
            memories.c.id,
            memories.c.content,
            memories.c.created_at,
            memories.c.embedding,
        )
        .join(memories, memories.c.id == memory_sources.c.source_id)
        .where(memory_sources.c.rule_id.in_([r.id for r in found]))
        .order_by(memories.c.created_at, memories.c.id)
    )
    by_rule: dict[str, list[Episode]] = {}
    for row in sources:
        by_rule.setdefault(row.rule_id, []).append(_episode(row))
    return [Rule(r.id, r.content, by_rule.get(r.id, [])) for r in found]


def _episode(row: Any) -> Episode:
    return Episode(row.id, row.content, row.created_at, np.asarray(row.embedding, dtype=float))


KeepVersion = Callable[[AsyncConnection, Mapping[Any, Any], str, str, datetime], Awaitable[None]]


async def link_sources(
    conn: AsyncConnection,
    group: GroupConfig,
    rule_id: str,
    source_ids: Sequence[str],
    pass_id: str,
    now: datetime,
    keep_version: KeepVersion,
) -> list[str]:
    """Link the sources to the rule and apply the source policy; returns the ids linked.

    A source is skipped (not an error) when it is no longer a pending episode of the rule's
    scope: erased, deleted, rewritten into another topic, or taken by another rule.
    `keep_version` records a prior version (the commit path's own).
    """
    config = _config(group)
    rule = (
        await conn.execute(
            select(memories.c.project, memories.c.user_id, memories.c.properties).where(
                memories.c.id == rule_id
            )
        )
    ).first()
    if rule is None:
        return []
    spec = config.scope_of({t.name: t for t in group.topics})
    scope = EpisodeScope.of(rule.project, group.name, spec, rule.user_id, rule.properties or {})
    candidates = (
        await conn.execute(
            select(memories)
            .where(
                memories.c.id.in_(list(source_ids)),
                in_scope(scope, config.episode_topics),
                memories.c.status == MemoryStatus.active,
                ~_linked(),
            )
            .order_by(memories.c.created_at, memories.c.id)
            .with_for_update()
        )
    ).all()
    if not candidates:
        return []
    await conn.execute(
        insert(memory_sources),
        [
            {"source_id": row.id, "rule_id": rule_id, "project": row.project,
             "group": row.group, "pass_id": pass_id, "linked_at": now}
            for row in candidates
        ],
    )  # fmt: skip
    ids = [row.id for row in candidates]
    if config.sources == "consolidate":
        await conn.execute(
            update(memories).where(memories.c.id.in_(ids)).values(status=MemoryStatus.consolidated)
        )
    elif config.sources == "delete":
        for row in candidates:
            await keep_version(conn, row._mapping, "deleted", pass_id, now)
        await conn.execute(
            update(memories)
            .where(memories.c.id.in_(ids))
            .values(status=MemoryStatus.archived, version=memories.c.version + 1, updated_at=now)
        )
    return ids


# -- the sources of a rule, the rule of a source -----------------------------------------------


async def sources_of(
    conn: AsyncConnection, project: str, group: GroupConfig, user_id: str | None, rule_id: str
) -> list[Memory] | None:
    """The rule's sources the caller may see, oldest first, whatever their status; None when
    the caller may not see the rule."""
    owner = memory_owner_filter(project, group, user_id)
    visible = (
        await conn.execute(select(memories.c.id).where(memories.c.id == rule_id, owner))
    ).first()
    if visible is None:
        return None
    rows = await conn.execute(
        select(*MEMORY_COLUMNS)
        .join(memory_sources, memory_sources.c.source_id == memories.c.id)
        .where(memory_sources.c.rule_id == rule_id, owner)
        .order_by(memories.c.created_at, memories.c.id)
    )
    return [memory_from_row(r).model_copy(update={"consolidated_into": rule_id}) for r in rows]


async def rules_of(conn: AsyncConnection, memory_ids: Sequence[str]) -> dict[str, str]:
    """source id -> rule id, for those of `memory_ids` that a rule holds."""
    if not memory_ids:
        return {}
    rows = await conn.execute(
        select(memory_sources.c.source_id, memory_sources.c.rule_id).where(
            memory_sources.c.source_id.in_(list(memory_ids))
        )
    )
    return {r.source_id: r.rule_id for r in rows}


# -- per-scope trigger state ---------------------------------------------------------------------


async def note_new(conn: AsyncConnection, scope: EpisodeScope, count: int, now: datetime) -> Any:
    """Count `count` new episodes in the scope; returns its state row."""
    stmt = pg_insert(scopes).values(
        project=scope.project, group=scope.group, scope_key=scope.key, user_id=scope.user_id,
        properties=dict(scope.properties), new_count=count, first_new_at=now, last_new_at=now,
        updated_at=now,
    )  # fmt: skip
    stmt = stmt.on_conflict_do_update(
        index_elements=[scopes.c.project, scopes.c.group, scopes.c.scope_key],
        set_={
            "new_count": scopes.c.new_count + stmt.excluded.new_count,
            "first_new_at": func.coalesce(scopes.c.first_new_at, stmt.excluded.first_new_at),
            "last_new_at": stmt.excluded.last_new_at,
            "updated_at": stmt.excluded.updated_at,
        },
    )
    return (await conn.execute(stmt.returning(scopes))).one()


async def state(conn: AsyncConnection, scope: EpisodeScope) -> Any | None:
    return (
        await conn.execute(
            select(scopes).where(
                scopes.c.project == scope.project,
                scopes.c.group == scope.group,
                scopes.c.scope_key == scope.key,
            )
        )
    ).first()


async def waiting(conn: AsyncConnection) -> list[Any]:
    """Every scope with episodes new since its last pass."""
    return list((await conn.execute(select(scopes).where(scopes.c.new_count > 0))).all())


async def of_group(conn: AsyncConnection, project: str, group: str) -> list[Any]:
    return list(
        (
            await conn.execute(
                select(scopes)
                .where(scopes.c.project == project, scopes.c.group == group)
                .order_by(scopes.c.updated_at.desc(), scopes.c.scope_key)
            )
        ).all()
    )


async def finish_pass(
    conn: AsyncConnection,
    scope: EpisodeScope,
    seen: int,
    started: datetime,
    now: datetime,
    error: str | None = None,
) -> None:
    """A pass that saw `seen` new episodes ended. Episodes that arrived while it ran stay
    new, counted from `started`; a failed pass (`error`) leaves the count as it was, so the
    next trigger retries."""
    where = and_(
        scopes.c.project == scope.project,
        scopes.c.group == scope.group,
        scopes.c.scope_key == scope.key,
    )
    if error is not None:
        values: dict[str, Any] = {"last_error": error}
    else:
        remaining = func.greatest(scopes.c.new_count - seen, 0)
        values = {
            "new_count": remaining,
            "first_new_at": case((remaining > 0, literal(started)), else_=None),
            "last_error": None,
        }
    await conn.execute(
        update(scopes).where(where).values(last_pass_at=now, updated_at=now, **values)
    )
