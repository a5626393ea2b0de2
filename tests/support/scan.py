"""The erasure check: search every column of every table for given strings.

Tables and columns come from the catalog (`information_schema.columns`, schema `public`), so a
table or column added later is searched too. Every column is read as text (`col::text`):
text, varchar, json, jsonb, arrays and tsvector hold words; the other types cannot match a
test's tokens, and reading them costs nothing here. Nothing is excluded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

# Column types that can hold a user's words (what the scan must not miss).
TEXT_TYPES = frozenset({"text", "character varying", "json", "jsonb", "ARRAY", "tsvector"})


@dataclass(frozen=True)
class Hit:
    table: str
    column: str
    needle: str
    rows: int

    def __str__(self) -> str:
        return f"{self.table}.{self.column} holds {self.needle!r} in {self.rows} row(s)"


async def columns(db: AsyncEngine) -> list[tuple[str, str, str]]:
    """(table, column, data type) of every column of every base table in `public`."""
    async with db.connect() as conn:
        rows = await conn.execute(
            text("""
                SELECT c.table_name, c.column_name, c.data_type
                FROM information_schema.columns AS c
                JOIN information_schema.tables AS t
                  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
                WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
                ORDER BY c.table_name, c.ordinal_position
            """)
        )
        return [(r.table_name, r.column_name, r.data_type) for r in rows]


async def find(db: AsyncEngine, needles: Iterable[str]) -> list[Hit]:
    """Every (table, column, needle) where some row's value contains the needle (any case)."""
    wanted = sorted({n.lower() for n in needles})
    assert wanted and all(len(n) >= 6 for n in wanted), "needles must be distinctive"
    hits: list[Hit] = []
    async with db.connect() as conn:
        for table, column, _ in await columns(db):
            rows = await conn.execute(
                text(
                    f'SELECT n.needle, count(*) AS rows FROM "{table}" AS t, '
                    "unnest(CAST(:needles AS text[])) AS n(needle) "
                    f'WHERE strpos(lower(CAST(t."{column}" AS text)), n.needle) > 0 '
                    "GROUP BY n.needle"
                ),
                {"needles": wanted},
            )
            hits.extend(Hit(table, column, r.needle, int(r.rows)) for r in rows)
    return hits


def report(hits: Iterable[Hit]) -> str:
    return "\n".join(str(h) for h in hits) or "(nothing)"
