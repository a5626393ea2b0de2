"""Run rows: what was added, where it is in its pipeline, and what it committed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.memory import CommittedOperation, CommittedOperations, Run, RunState
from mnemo.store.schema import runs

_OPEN = (RunState.running.value, RunState.in_buffer.value)


async def create(conn: AsyncConnection, rows: Sequence[Mapping[Any, Any]]) -> None:
    """Insert new run rows (one statement)."""
    if rows:
        await conn.execute(insert(runs).values([dict(row) for row in rows]))


async def get(conn: AsyncConnection, project: str, run_id: str) -> Run | None:
    row = (
        await conn.execute(select(runs).where(runs.c.run_id == run_id, runs.c.project == project))
    ).first()
    return run_from_row(row._mapping) if row else None


async def raw(conn: AsyncConnection, run_id: str) -> Mapping[Any, Any] | None:
    row = (await conn.execute(select(runs).where(runs.c.run_id == run_id))).first()
    return row._mapping if row else None


async def set_status(
    conn: AsyncConnection,
    run_ids: Iterable[str],
    status: RunState,
    now: datetime,
    error: str | None = None,
) -> None:
    """Move open runs to `status`; finished runs keep theirs."""
    await conn.execute(
        update(runs)
        .where(runs.c.run_id.in_(list(run_ids)), runs.c.status.in_(_OPEN))
        .values(status=status.value, error=error, updated_at=now)
    )


async def reopen(conn: AsyncConnection, run_id: str, now: datetime) -> None:
    await conn.execute(
        update(runs)
        .where(runs.c.run_id == run_id)
        .values(status=RunState.running.value, error=None, updated_at=now)
    )


async def record_commit(
    conn: AsyncConnection,
    by_run: Mapping[str, Mapping[str, list[str]]],
    run_ids: Iterable[str],
    now: datetime,
) -> list[datetime]:
    """Complete the batch's runs and append what each committed.

    Returns the creation times of the runs this call completed (for end-to-end latency).
    """
    stamp = now.isoformat()
    completed: list[datetime] = []
    for run_id in run_ids:
        row = (
            await conn.execute(
                select(runs.c.committed_operations, runs.c.status, runs.c.created_at)
                .where(runs.c.run_id == run_id)
                .with_for_update()
            )
        ).first()
        if row is None:
            continue
        if row.status in _OPEN:
            completed.append(row.created_at)
        current = row.committed_operations or {"created": [], "updated": [], "deleted": []}
        for kind, ids in by_run.get(run_id, {}).items():
            current[kind] = [
                *current[kind],
                *({"memory_id": i, "committed_at": stamp} for i in ids),
            ]
        await conn.execute(
            update(runs)
            .where(runs.c.run_id == run_id)
            .values(
                committed_operations=current,
                updated_at=now,
                status=RunState.completed.value,
                error=None,
            )
        )
    return completed


def run_from_row(m: Mapping[Any, Any]) -> Run:
    ops = m["committed_operations"]
    return Run(
        run_id=m["run_id"],
        status=RunState(m["status"]),
        group_id=m["group"],
        starting_step=m["starting_step"],
        input_type=m["input_type"],
        user_id=m["user_id"],
        error=m["error"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        committed_operations=CommittedOperations(
            **{k: [CommittedOperation(**op) for op in v] for k, v in ops.items()}
        )
        if ops
        else CommittedOperations(),
    )
