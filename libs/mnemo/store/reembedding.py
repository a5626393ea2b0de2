"""Rows for `core.reembed`: stored vectors read and rewritten in id order, the pass's
progress, and the embedder label the pass holds while it runs.

Progress lives in `settings_meta` (`reembed_progress`: the target label, the table and the
last id written), written in the same transaction as each batch, so an interrupted pass
resumes after the last batch that committed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Table, bindparam, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.embedder_identity import LABEL_KEY, stored_setting
from mnemo.store.schema import memories, memory_versions, settings_meta

# The tables holding vectors, in the order a pass takes them.
TABLES = ("memories", "memory_versions")
_PROGRESS = "reembed_progress"


def _table(name: str) -> Table:
    return memories if name == "memories" else memory_versions


def _key(name: str, raw: str) -> str | int:
    """A row id as `Progress.after` keeps it (text) in its column's type."""
    return raw if name == "memories" else int(raw or 0)


@dataclass(frozen=True)
class Progress:
    label: str  # the embedder the pass embeds with
    table: str
    after: str  # the last id written in `table` ("" before the first)


async def other_connections(conn: AsyncConnection) -> int:
    """Client connections to this database other than `conn` (a running mnemo process
    holds at least one)."""
    query = text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    return int((await conn.execute(query)).scalar_one())


async def put(conn: AsyncConnection, key: str, value: str) -> None:
    await conn.execute(
        text(
            "INSERT INTO settings_meta (key, value) VALUES (:key, :value) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
        ),
        {"key": key, "value": value},
    )


async def set_label(conn: AsyncConnection, label: str) -> None:
    await put(conn, LABEL_KEY, label)


async def progress(conn: AsyncConnection) -> Progress | None:
    raw = await stored_setting(conn, _PROGRESS)
    return None if raw is None else Progress(**json.loads(raw))


async def save_progress(conn: AsyncConnection, at: Progress | None) -> None:
    if at is None:
        await conn.execute(settings_meta.delete().where(settings_meta.c.key == _PROGRESS))
    else:
        await put(conn, _PROGRESS, json.dumps(at.__dict__))


async def count(conn: AsyncConnection, name: str, after: str) -> int:
    """Vectors of table `name` past id `after` (versions kept before 0006 have none)."""
    table = _table(name)
    where = (table.c.id > _key(name, after), table.c.embedding.is_not(None))
    return int((await conn.execute(select(func.count()).where(*where))).scalar_one())


async def batch(conn: AsyncConnection, name: str, after: str, limit: int) -> list[tuple[str, str]]:
    """The next `limit` (id, content) pairs of table `name` after id `after`, in id order."""
    table = _table(name)
    rows = await conn.execute(
        select(table.c.id, table.c.content)
        .where(table.c.id > _key(name, after), table.c.embedding.is_not(None))
        .order_by(table.c.id)
        .limit(limit)
    )
    return [(str(row.id), row.content) for row in rows]


async def write(
    conn: AsyncConnection, name: str, ids: Sequence[str], vectors: Sequence[Sequence[float]]
) -> None:
    table = _table(name)
    values = [
        {"row_id": _key(name, i), "vector": list(v)} for i, v in zip(ids, vectors, strict=True)
    ]
    stmt = update(table).where(table.c.id == bindparam("row_id"))
    await conn.execute(stmt.values(embedding=bindparam("vector")), values)
