"""Reading a project's memories for an export, and writing imported ones as they are.

Exports read memories in id order (`after`: the last id sent), a batch per statement with
their versions; imports replace a memory and its versions whole, so importing the same
lines twice leaves the same state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Table, and_, delete, func, insert, not_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.event_time import as_utc
from mnemo.domain.instant import MAX_INSTANT, MIN_INSTANT
from mnemo.domain.transfer import ExportedMemory, ExportedSource, ExportedVersion, encode_vector
from mnemo.errors import MnemoError
from mnemo.store.schema import memories, memory_sources, memory_versions

# What an export copies of a memory, besides its versions and vector.
_FIELDS = (
    "id", "group", "topic", "user_id", "properties", "content", "status", "version",
    "run_ids", "created_at", "updated_at", "event_time", "event_time_end",
    "written_by_run_id", "operation",
)  # fmt: skip
_VERSION_FIELDS = (
    "version", "content", "valid_from", "valid_to", "change", "run_id", "status",
    "event_time", "event_time_end", "written_by_run_id", "operation",
)  # fmt: skip
_MEMORY_TIMES = ("created_at", "updated_at", "event_time", "event_time_end")
_VERSION_TIMES = ("valid_from", "valid_to", "event_time", "event_time_end")
_TIMES = frozenset(_MEMORY_TIMES + _VERSION_TIMES)


class ImportConflict(MnemoError, ValueError):
    """Memory ids that exist here in another project or group: nothing was written."""

    def __init__(self, ids: list[str]) -> None:
        super().__init__(", ".join(ids))
        self.ids = ids


async def counts(conn: AsyncConnection, project: str, after: str | None) -> tuple[int, int, int]:
    """(memories, users, memories after `after`) of the project."""
    everything = (
        await conn.execute(
            select(func.count(), func.count(func.distinct(memories.c.user_id))).where(
                memories.c.project == project
            )
        )
    ).one()
    remaining = everything[0]
    if after is not None:
        remaining = (
            await conn.execute(
                select(func.count()).where(memories.c.project == project, memories.c.id > after)
            )
        ).scalar_one()
    return int(everything[0]), int(everything[1]), int(remaining)


async def read_batch(
    conn: AsyncConnection, project: str, after: str | None, limit: int, vectors: bool
) -> tuple[list[ExportedMemory], list[str], str | None]:
    """Up to `limit` memories of the project with ids after `after`, in id order; the ids
    among them skipped because a stored time of theirs lies outside the accepted range
    (Python could not read it back); and the last id looked at (None: none was left)."""
    ids = list(
        (
            await conn.execute(
                select(memories.c.id)
                .where(memories.c.project == project, *([memories.c.id > after] if after else []))
                .order_by(memories.c.id)
                .limit(limit)
            )
        ).scalars()
    )
    if not ids:
        return [], [], None
    columns = [memories.c[name] for name in _FIELDS]
    if vectors:
        columns.append(memories.c.embedding)
    bad_versions = select(memory_versions.c.memory_id).where(
        memory_versions.c.memory_id.in_(ids), not_(_readable(memory_versions, _VERSION_TIMES))
    )
    statement = select(*columns).where(
        memories.c.id.in_(ids),
        _readable(memories, _MEMORY_TIMES),
        memories.c.id.not_in(bad_versions),
    )
    rows = (await conn.execute(statement.order_by(memories.c.id))).all()
    read = [r.id for r in rows]
    versions = await _versions(read, vectors, conn)
    sources = await _sources(read, conn)
    exported = [
        ExportedMemory.model_validate(
            {
                **_plain(r._mapping, _FIELDS, vectors),
                "versions": versions.get(r.id, []),
                "sources": sources.get(r.id, []),
            }
        )
        for r in rows
    ]
    return exported, sorted(set(ids) - set(read)), ids[-1]


def _readable(table: Table, columns: tuple[str, ...]) -> ColumnElement[bool]:
    """Every time column of the row lies in the accepted range (see mnemo.domain.instant)."""
    return and_(*(table.c[c].between(MIN_INSTANT, MAX_INSTANT) for c in columns))


async def _sources(ids: list[str], conn: AsyncConnection) -> dict[str, list[ExportedSource]]:
    """The episodes each rule among `ids` holds, in the order they were linked."""
    if not ids:
        return {}
    rows = await conn.execute(
        select(memory_sources)
        .where(memory_sources.c.rule_id.in_(ids))
        .order_by(memory_sources.c.rule_id, memory_sources.c.linked_at, memory_sources.c.source_id)
    )
    found: dict[str, list[ExportedSource]] = defaultdict(list)
    for row in rows:
        found[row.rule_id].append(
            ExportedSource(
                memory_id=row.source_id, pass_id=row.pass_id, linked_at=as_utc(row.linked_at)
            )
        )
    return found


async def _versions(
    ids: list[str], vectors: bool, conn: AsyncConnection
) -> dict[str, list[ExportedVersion]]:
    if not ids:
        return {}
    columns = [memory_versions.c.memory_id, *(memory_versions.c[n] for n in _VERSION_FIELDS)]
    if vectors:
        columns.append(memory_versions.c.embedding)
    rows = await conn.execute(
        select(*columns)
        .where(memory_versions.c.memory_id.in_(ids))
        .order_by(memory_versions.c.memory_id, memory_versions.c.version)
    )
    found: dict[str, list[ExportedVersion]] = defaultdict(list)
    for row in rows:
        found[row.memory_id].append(
            ExportedVersion.model_validate(_plain(row._mapping, _VERSION_FIELDS, vectors))
        )
    return found


def _plain(row: Mapping[Any, Any], fields: Sequence[str], vectors: bool) -> dict[str, Any]:
    """A row's fields as the export writes them (times in UTC, the vector encoded)."""
    values = {name: row[name] for name in fields}
    for name in _TIMES & values.keys():
        values[name] = as_utc(values[name])
    if "run_ids" in values:
        values["run_ids"] = list(values["run_ids"] or [])
    if "properties" in values:
        values["properties"] = dict(values["properties"] or {})
    vector = row["embedding"] if vectors else None
    values["embedding"] = encode_vector([float(x) for x in vector]) if vector is not None else None
    return values


async def write(
    tx: AsyncConnection,
    project: str,
    rows: Sequence[Mapping[str, Any]],
    versions: Mapping[str, Sequence[Mapping[str, Any]]],
    sources: Mapping[str, Sequence[ExportedSource]],
) -> int:
    """Create or replace memories (`memories` rows without `project`), all their versions
    and, for rules, the episodes they hold (an episode is held by one rule: a link to it
    moves). ImportConflict when an id is another project's or group's memory. Returns how
    many of the memories were here already (replaced, not added)."""
    ids = [row["id"] for row in rows]
    owners = await tx.execute(
        select(memories.c.id, memories.c.project, memories.c.group)
        .where(memories.c.id.in_(ids))
        .with_for_update()
    )
    group_of = {row["id"]: row["group"] for row in rows}
    owners_seen = list(owners)
    clashes = sorted(
        o.id for o in owners_seen if o.project != project or o.group != group_of.get(o.id)
    )
    if clashes:
        raise ImportConflict(clashes)
    values = [{**row, "project": project} for row in rows]
    statement = pg_insert(memories).values(values)
    replace = {c.name: statement.excluded[c.name] for c in memories.c if not c.computed}
    await tx.execute(statement.on_conflict_do_update(index_elements=[memories.c.id], set_=replace))
    await tx.execute(delete(memory_versions).where(memory_versions.c.memory_id.in_(ids)))
    kept = [
        {**v, "memory_id": memory_id, "project": project, "group": group_of[memory_id]}
        for memory_id, memory_versions_of in versions.items()
        for v in memory_versions_of
    ]
    if kept:
        await tx.execute(insert(memory_versions), kept)
    await tx.execute(delete(memory_sources).where(memory_sources.c.rule_id.in_(ids)))
    links = [
        {"source_id": s.memory_id, "rule_id": rule_id, "project": project,
         "group": group_of[rule_id], "pass_id": s.pass_id, "linked_at": s.linked_at}
        for rule_id, held in sources.items()
        for s in held
    ]  # fmt: skip
    if links:
        statement = pg_insert(memory_sources).values(links)
        await tx.execute(
            statement.on_conflict_do_update(
                index_elements=[memory_sources.c.source_id],
                set_={
                    c: statement.excluded[c]
                    for c in ("rule_id", "project", "group", "pass_id", "linked_at")
                },
            )
        )
    return len({o.id for o in owners_seen})
