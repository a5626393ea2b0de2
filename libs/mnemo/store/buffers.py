"""Buffered items per (group, buffer step, scope). They survive restarts because they are rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.schema import buffer_items, buffer_watermarks


@dataclass(frozen=True)
class BufferKey:
    project: str
    group: str
    step_id: str
    scope_key: str

    def where(self) -> Any:
        b = buffer_items.c
        return (
            (b.project == self.project)
            & (b.group == self.group)
            & (b.step_id == self.step_id)
            & (b.scope_key == self.scope_key)
        )


@dataclass(frozen=True)
class BufferedItem:
    id: int
    run_id: str
    payload: dict[str, Any]
    created_at: datetime


async def append(
    conn: AsyncConnection,
    key: BufferKey,
    run_id: str,
    payloads: Sequence[dict[str, Any]],
    now: datetime,
) -> None:
    if payloads:
        await conn.execute(
            insert(buffer_items),
            [
                {
                    "project": key.project,
                    "group": key.group,
                    "step_id": key.step_id,
                    "scope_key": key.scope_key,
                    "run_id": run_id,
                    "payload": p,
                    "created_at": now,
                }
                for p in payloads
            ],
        )


async def items(conn: AsyncConnection, key: BufferKey, lock: bool = False) -> list[BufferedItem]:
    stmt = select(buffer_items).where(key.where()).order_by(buffer_items.c.id)
    if lock:
        stmt = stmt.with_for_update()
    rows = (await conn.execute(stmt)).all()
    return [BufferedItem(r.id, r.run_id, r.payload, r.created_at) for r in rows]


async def remove(conn: AsyncConnection, ids: Sequence[int]) -> None:
    if ids:
        await conn.execute(delete(buffer_items).where(buffer_items.c.id.in_(list(ids))))


async def trim(conn: AsyncConnection, key: BufferKey, keep: int) -> None:
    """Keep only the newest `keep` items (sliding windows)."""
    newest = (
        select(buffer_items.c.id).where(key.where()).order_by(buffer_items.c.id.desc()).limit(keep)
    )
    await conn.execute(delete(buffer_items).where(key.where(), buffer_items.c.id.notin_(newest)))


async def pending(conn: AsyncConnection) -> list[tuple[BufferKey, datetime, datetime, int]]:
    """Every non-empty buffer with its first and last item times and its size."""
    b = buffer_items.c
    rows = (
        await conn.execute(
            select(
                b.project,
                b.group,
                b.step_id,
                b.scope_key,
                func.min(b.created_at),
                func.max(b.created_at),
                func.count(),
            ).group_by(b.project, b.group, b.step_id, b.scope_key)
        )
    ).all()
    return [(BufferKey(r[0], r[1], r[2], r[3]), r[4], r[5], r[6]) for r in rows]


async def watermark(conn: AsyncConnection, key: BufferKey) -> datetime | None:
    """The latest event time the buffer has taken in (None before its first item)."""
    w = buffer_watermarks.c
    return (
        await conn.execute(
            select(w.watermark).where(
                w.project == key.project,
                w.group == key.group,
                w.step_id == key.step_id,
                w.scope_key == key.scope_key,
            )
        )
    ).scalar_one_or_none()


async def advance_watermark(conn: AsyncConnection, key: BufferKey, at: datetime) -> None:
    """Move the buffer's watermark to `at` unless it is already later."""
    stmt = pg_insert(buffer_watermarks).values(
        project=key.project, group=key.group, step_id=key.step_id, scope_key=key.scope_key,
        watermark=at,
    )  # fmt: skip
    await conn.execute(
        stmt.on_conflict_do_update(
            index_elements=["project", "group", "step_id", "scope_key"],
            set_={
                "watermark": func.greatest(buffer_watermarks.c.watermark, stmt.excluded.watermark)
            },
        )
    )
