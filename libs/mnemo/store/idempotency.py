"""Idempotency keys of adds (`mnemo.domain.idempotency`): one row per (project, key).

A key is claimed in the transaction that writes its run's row, so a key exists exactly
when its run does. Concurrent claims of one key serialize on the primary key: the first
commits, the others find it taken. A row past its `expires_at` is free again: a new claim
takes it over, and `sweep` deletes such rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.idempotency import IdempotencyClaim
from mnemo.store.schema import idempotency_keys

SWEEP_BATCH = 1000


@dataclass(frozen=True)
class KeyRecord:
    run_id: str
    fingerprint: str
    created_at: datetime


async def find(conn: AsyncConnection, project: str, key: str, now: datetime) -> KeyRecord | None:
    """The live claim of `key` in `project` (None if there is none, or it expired)."""
    row = (
        await conn.execute(
            select(
                idempotency_keys.c.run_id,
                idempotency_keys.c.fingerprint,
                idempotency_keys.c.created_at,
            ).where(
                idempotency_keys.c.project == project,
                idempotency_keys.c.key == key,
                idempotency_keys.c.expires_at > now,
            )
        )
    ).first()
    return KeyRecord(row.run_id, row.fingerprint, row.created_at) if row else None


def _claim_statement() -> Any:
    insert = pg_insert(idempotency_keys)
    new = insert.excluded
    return insert.on_conflict_do_update(
        index_elements=[idempotency_keys.c.project, idempotency_keys.c.key],
        set_={
            "fingerprint": new.fingerprint,
            "run_id": new.run_id,
            "created_at": new.created_at,
            "expires_at": new.expires_at,
        },
        where=idempotency_keys.c.expires_at <= new.created_at,
    ).returning(idempotency_keys.c.project, idempotency_keys.c.key)


# Built once and executed with the list of rows (compiled once, whatever their number).
_CLAIM = _claim_statement()


async def claim(tx: AsyncConnection, claims: Sequence[IdempotencyClaim]) -> set[tuple[str, str]]:
    """Record `claims` (distinct keys); returns the (project, key) pairs this call took.

    A key held by a live claim is not taken; an expired one is taken over. A concurrent
    uncommitted claim of the same key makes this wait for its outcome.
    """
    if not claims:
        return set()
    rows = await tx.execute(_CLAIM, [c.to_row() for c in claims])
    return {(row.project, row.key) for row in rows}


async def release(tx: AsyncConnection, claim: IdempotencyClaim) -> None:
    """Drop the claim again (its add was refused after all), if it is still this run's."""
    await tx.execute(
        delete(idempotency_keys).where(
            idempotency_keys.c.project == claim.project,
            idempotency_keys.c.key == claim.key,
            idempotency_keys.c.run_id == claim.run_id,
        )
    )


async def sweep(conn: AsyncConnection, now: datetime, limit: int = SWEEP_BATCH) -> int:
    """Delete up to `limit` expired keys; returns how many."""
    expired = (
        select(idempotency_keys.c.project, idempotency_keys.c.key)
        .where(idempotency_keys.c.expires_at <= now)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .subquery()
    )
    result = await conn.execute(
        delete(idempotency_keys).where(
            idempotency_keys.c.project == expired.c.project,
            idempotency_keys.c.key == expired.c.key,
        )
    )
    return int(result.rowcount)
