"""Raw-input retention: redact the raw input of runs whose group keeps it no longer.

The group's `retention` lives in its configuration document (`groups.config`), so one
statement finds every run past its own group's `raw_input_days`. Runs still `running` keep
their input (the pipeline has yet to read it). Sliding-window buffer items hold raw text too:
they go when their run's input is redacted. Batch buffers hold extracted items waiting for
their trigger, not raw input; they go when they flush.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.memory import RunState
from mnemo.domain.retention import Redaction
from mnemo.store import tombstones
from mnemo.store.schema import runs

SWEEP_BATCH = 500

_EXPIRE = text(f"""
    WITH due AS (
      SELECT r.run_id FROM runs AS r
      JOIN groups AS g ON g.project = r.project AND g.name = r."group"
      WHERE r.redaction IS NULL
        AND r.status <> '{RunState.running.value}'
        AND g.config -> 'retention' ->> 'raw_input_days' IS NOT NULL
        AND r.created_at < CAST(:now AS timestamptz) - make_interval(
              secs => CAST(g.config -> 'retention' ->> 'raw_input_days' AS float8) * 86400)
      LIMIT :limit
      FOR UPDATE OF r SKIP LOCKED
    )
    UPDATE runs SET raw_input = '{{}}'::jsonb, redaction = '{Redaction.expired.value}',
                    redacted_at = :now
    FROM due WHERE runs.run_id = due.run_id
""")
# Sliding-window items of runs whose raw input is gone for any reason but a commit (a window
# exists to give later runs the earlier inputs; `drop_raw_input_at_commit` leaves it be).
_DROP_WINDOW_ITEMS = text(f"""
    DELETE FROM buffer_items AS b USING runs AS r
    WHERE b.run_id = r.run_id AND b.payload -> 'units' IS NOT NULL
      AND r.redaction IS NOT NULL AND r.redaction <> '{Redaction.committed.value}'
""")


async def sweep(conn: AsyncConnection, now: datetime, limit: int = SWEEP_BATCH) -> int:
    """Redact up to `limit` expired raw inputs and drop stale window items; returns how
    many runs it redacted (call again while it returns `limit`)."""
    expired = int((await conn.execute(_EXPIRE, {"now": now, "limit": limit})).rowcount)
    await conn.execute(_DROP_WINDOW_ITEMS)
    return expired


async def drop_at_commit(conn: AsyncConnection, run_ids: Iterable[str], now: datetime) -> None:
    """Redact the raw input of these runs now that they completed."""
    ids = list(run_ids)
    if ids:
        await conn.execute(
            update(runs)
            .where(
                runs.c.run_id.in_(ids),
                runs.c.status == RunState.completed.value,
                runs.c.redaction.is_(None),
            )
            .values(raw_input={}, redaction=Redaction.committed.value, redacted_at=now)
        )


async def raw_input_gone(conn: AsyncConnection, run_ids: Iterable[str]) -> set[str]:
    """The runs whose raw input may no longer be used as context (sliding windows): erased,
    expired, or redacted with an erased memory. Raw input dropped at commit stays usable as
    window context (the window is the point of keeping the last inputs)."""
    ids = list(run_ids)
    if not ids:
        return set()
    redacted = (
        await conn.execute(
            select(runs.c.run_id).where(
                runs.c.run_id.in_(ids),
                runs.c.redaction.is_not(None),
                runs.c.redaction != Redaction.committed.value,
            )
        )
    ).scalars()
    return set(redacted) | await tombstones.erased_among(conn, ids)
