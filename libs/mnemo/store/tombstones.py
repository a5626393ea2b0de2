"""User tombstones: what keeps an erased user's data from coming back.

An erase writes one tombstone per (project, user): a salted SHA-256 of the normalized user id
(the salt is a random per-installation secret in `settings_meta`, so the table never holds
the id), the number the erase drew from `run_admission_seq`, and where the Kafka raw log
ended at that moment. A run is *erased* when its user has a tombstone with a larger number
than the run's own `admitted_seq` (it was admitted before the erase), or when an erase has
already redacted it. A later add for the same user draws a larger number: a new start.

Every pipeline transaction that persists a run's data first calls `guard`: it takes the
user's erase lock in shared mode, then screens the runs. An erase takes the same lock
exclusively to write its tombstone (`record`), so either the erase waits for that
transaction, and its clean-up then sees what it wrote, or the transaction sees the tombstone
and persists nothing. The lock is a transaction-level advisory lock; no row is held.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.retention import Redaction

LOCK_CLASS = 0x6D6E656D  # "mnem": the advisory-lock namespace of erase locks


def _identity(project: str, user: str) -> str:
    """SQL text naming (project, user) unambiguously (the project's length first)."""
    return f"(length({project}) || ':' || {project} || ':' || {user})"


def subject_sql(project: str, user: str) -> str:
    """SQL expression of the tombstone subject of (project, normalized user id)."""
    salt = "(SELECT value FROM settings_meta WHERE key = 'erasure_salt')"
    return f"encode(sha256(convert_to({salt} || ':' || {_identity(project, user)}, 'UTF8')), 'hex')"


def _lock_key(project: str, user: str) -> str:
    return f"{LOCK_CLASS}, hashtext({_identity(project, user)})"


_P, _U = "CAST(:project AS text)", "CAST(:user_id AS text)"

_LOCK_EXCLUSIVE = text(f"SELECT pg_advisory_xact_lock({_lock_key(_P, _U)})")
_LOCK_SHARED = text(f"SELECT pg_advisory_xact_lock_shared({_lock_key(_P, _U)})")
_LOCK_RUNS_SHARED = text(f"""
    SELECT pg_advisory_xact_lock_shared({_lock_key("u.project", "u.user_id")})
    FROM (SELECT DISTINCT project, user_id FROM runs
          WHERE run_id = ANY(:run_ids) AND user_id IS NOT NULL) AS u
""")
_RECORD = text(f"""
    INSERT INTO erasures (project, subject, seq, raw_log_position, erased_at)
    VALUES ({_P}, {subject_sql(_P, _U)}, nextval('run_admission_seq'),
            CAST(:position AS jsonb), :now)
    ON CONFLICT (project, subject) DO UPDATE
      SET seq = excluded.seq, raw_log_position = excluded.raw_log_position,
          erased_at = excluded.erased_at, completed_at = NULL
    RETURNING seq
""")
_ERASED_AMONG = text(f"""
    SELECT r.run_id FROM runs AS r
    WHERE r.run_id = ANY(:run_ids)
      AND (r.redaction = '{Redaction.erased.value}'
           OR (r.user_id IS NOT NULL AND EXISTS (
               SELECT 1 FROM erasures AS e
               WHERE e.project = r.project
                 AND e.subject = {subject_sql("r.project", "r.user_id")}
                 AND e.seq > r.admitted_seq)))
""")
_LOOKUP = text(f"""
    SELECT seq, raw_log_position, erased_at FROM erasures
    WHERE project = {_P} AND subject = {subject_sql(_P, _U)}
""")
_LATEST = text("SELECT coalesce(max(seq), 0) FROM erasures")


@dataclass(frozen=True)
class Tombstone:
    """An erased user's tombstone: the erase's admission number, when it happened, and the
    Kafka raw log's end offsets then (`{"topic": ..., "offsets": {partition: offset}}`)."""

    seq: int
    erased_at: datetime
    raw_log_position: Mapping[str, Any] | None = None

    def covers_raw_record(
        self, topic: str, partition: int, offset: int, timestamp: datetime | None
    ) -> bool:
        """Whether a raw-log record was appended before this erase. Offsets decide when the
        erase saw this topic; otherwise the record's timestamp is compared with the erase's
        time (clocks may differ a little), and a record without one counts as before."""
        position = self.raw_log_position or {}
        if position.get("topic") == topic:
            end = (position.get("offsets") or {}).get(str(partition))
            if end is not None:
                return offset < int(end)
        return timestamp is None or timestamp < self.erased_at


async def record(
    conn: AsyncConnection,
    project: str,
    user_id: str,
    raw_log_position: Mapping[str, Any] | None,
    now: datetime,
) -> int:
    """Write (or renew) the user's tombstone under the exclusive erase lock; returns its
    number. Commit at once: pipeline transactions of this user wait for it meanwhile."""
    params = {"project": project, "user_id": user_id}
    await conn.execute(_LOCK_EXCLUSIVE, params)
    position = json.dumps(raw_log_position) if raw_log_position is not None else None
    seq = (await conn.execute(_RECORD, {**params, "position": position, "now": now})).scalar_one()
    return int(seq)


async def guard(conn: AsyncConnection, run_ids: Iterable[str]) -> set[str]:
    """Take the erase locks of these runs' users (shared, until the transaction ends), then
    return the runs that are erased. Call before persisting anything of the runs."""
    ids = list(run_ids)
    if not ids:
        return set()
    await conn.execute(_LOCK_RUNS_SHARED, {"run_ids": ids})
    return await erased_among(conn, ids)


async def guard_user(conn: AsyncConnection, project: str, user_id: str) -> Tombstone | None:
    """`guard` for an add that has no run row yet: the user's lock (shared), then the
    user's tombstone, if any."""
    await conn.execute(_LOCK_SHARED, {"project": project, "user_id": user_id})
    return await lookup(conn, project, user_id)


async def erased_among(conn: AsyncConnection, run_ids: Iterable[str]) -> set[str]:
    """The runs among `run_ids` whose user was erased after their admission (or that an
    erase redacted already). No lock: for checks that persist nothing."""
    ids = list(run_ids)
    if not ids:
        return set()
    rows = await conn.execute(_ERASED_AMONG, {"run_ids": ids})
    return {r.run_id for r in rows}


async def lookup(conn: AsyncConnection, project: str, user_id: str) -> Tombstone | None:
    row = (await conn.execute(_LOOKUP, {"project": project, "user_id": user_id})).first()
    if row is None:
        return None
    return Tombstone(int(row.seq), row.erased_at, row.raw_log_position)


async def latest(conn: AsyncConnection) -> int:
    """The newest tombstone's number (0 without any): a cheap "did anyone get erased since?"."""
    return int((await conn.execute(_LATEST)).scalar_one())
