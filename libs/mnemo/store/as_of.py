"""As-of reads: the memories as they stood at a past system time, versions included.

`states_at(t)` is a derived table with every column of `memories`: for each memory, the
state that was current at `t` — the memory's row if it was last written at or before `t`,
else the version whose validity [valid_from, valid_to) holds `t`. A memory created after
`t` has neither and is absent; one deleted after `t` shows its active state of then; the
usual `status = 'active'` filter hides states that were deleted at `t`.

`AsOfConnection` runs the ordinary search and list statements (written against
`memories`) over that table instead, by rewriting their references to `memories` (SQLAlchemy's
`ClauseAdapter`), so vector, keyword, hybrid, fetch and list share one implementation for
"now" and "then". Versions keep their embedding and lexemes for this; a version kept before
those were stored is ranked by its memory's current vector (and its own lexemes).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Subquery,
    and_,
    func,
    literal,
    select,
    union_all,
)
from sqlalchemy.engine import Result
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.selectable import NamedFromClause
from sqlalchemy.sql.util import ClauseAdapter

from mnemo.store.schema import memories, memory_versions


def _version_columns(owner: NamedFromClause) -> list[ColumnElement[Any]]:
    """A version's state under the names of `memories` columns (in their order); `owner`
    is the version's memory row."""
    v = memory_versions.c
    own = {
        "id": v.memory_id,
        "updated_at": v.valid_from,  # when this content was written
        "embedding": func.coalesce(v.embedding, owner.c.embedding),
    }
    columns: list[ColumnElement[Any]] = []
    for name in memories.c.keys():
        if name in own:
            column = own[name]
        elif name in v:
            column = v[name]
        else:  # what a memory never changes (topic, scope, created_at, ...) or later columns
            column = owner.c[name]
        columns.append(column.label(name))
    return columns


def states_at(at: datetime) -> Subquery:
    """Every memory's state at system time `at`, as a table shaped like `memories`."""
    when = literal(at, memories.c.updated_at.type)
    current = select(memories).where(memories.c.updated_at <= when)
    owner = memories.alias("owner")
    earlier = (
        select(*_version_columns(owner))
        .select_from(memory_versions.join(owner, owner.c.id == memory_versions.c.memory_id))
        .where(and_(memory_versions.c.valid_from <= when, memory_versions.c.valid_to > when))
    )
    return union_all(current, earlier).subquery("memories_as_of")


class AsOfConnection:
    """A connection whose statements read `memories` as they stood at `at`."""

    def __init__(self, conn: AsyncConnection, at: datetime) -> None:
        self._conn = conn
        self._adapter = ClauseAdapter(states_at(at))

    async def execute(self, statement: Any, *args: Any, **kwargs: Any) -> Result[Any]:
        return await self._conn.execute(self._adapter.traverse(statement), *args, **kwargs)


def reading_at(conn: AsyncConnection, at: datetime | None) -> Any:
    """`conn` itself for "now", or a connection that reads the memories as of `at`."""
    return conn if at is None else AsOfConnection(conn, at)
