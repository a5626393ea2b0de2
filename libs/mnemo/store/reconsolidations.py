"""The reconsolidation gate's decisions: one row per recalled memory and run.

The run reports them (`Run.reconsolidation`), and the hourly cap counts the written ones.
Rows hold the evidence quoted from the user's input: they are erased with the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.reconsolidation import GateDecision
from mnemo.store.schema import reconsolidation_decisions as decisions


async def record(
    conn: AsyncConnection,
    *,
    project: str,
    group: str,
    run_id: str,
    user_id: str | None,
    gate: Sequence[GateDecision],
    now: datetime,
) -> None:
    if not gate:
        return
    await conn.execute(
        insert(decisions),
        [
            {
                "project": project,
                "group": group,
                "run_id": run_id,
                "memory_id": d.memory_id,
                "user_id": user_id,
                "decision": d.decision,
                "evidence": d.evidence,
                "applied": d.applied,
                "reason": d.reason,
                "decided_at": now,
            }
            for d in gate
        ],
    )


async def for_runs(conn: AsyncConnection, run_ids: Sequence[str]) -> dict[str, list[GateDecision]]:
    """The decisions of each run that has any, in the order they were made."""
    rows = await conn.execute(
        select(decisions).where(decisions.c.run_id.in_(list(run_ids))).order_by(decisions.c.id)
    )
    out: dict[str, list[GateDecision]] = {}
    for r in rows:
        out.setdefault(r.run_id, []).append(
            GateDecision(
                memory_id=r.memory_id,
                decision=r.decision,
                evidence=r.evidence,
                applied=r.applied,
                reason=r.reason,
            )
        )
    return out


async def written_since(conn: AsyncConnection, memory_id: str, since: datetime) -> int:
    """How many reconsolidation rewrites of the memory were written since `since`."""
    count = await conn.execute(
        select(func.count()).where(
            decisions.c.memory_id == memory_id,
            decisions.c.applied.is_(True),
            decisions.c.decided_at > since,
        )
    )
    return int(count.scalar_one())
