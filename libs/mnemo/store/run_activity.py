"""Runs per minute and their add-to-commit latency, from the runs table (the console's
pipeline-health charts: the last hour is on record, so they draw at once)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, extract, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.memory import RunState
from mnemo.store.schema import runs

# A run finishing within the hour was admitted at most this long before it (older ones
# are not looked at, so the scan stays on runs_project_created).
LOOKBACK = timedelta(hours=6)


@dataclass(frozen=True)
class MinuteOfRuns:
    minute: datetime  # start of the minute (UTC)
    completed: int
    failed: int
    # Add to commit of the runs completed in this minute, in seconds (None: none completed).
    latency_p50: float | None
    latency_p95: float | None


async def per_minute(
    conn: AsyncConnection, project: str, since: datetime, until: datetime
) -> list[MinuteOfRuns]:
    """Minutes in [since, until) in which some run of `project` completed or failed, oldest
    first (a run's last update is when it finished; a retried run counts where it ended)."""
    minute = func.date_trunc("minute", runs.c.updated_at).label("minute")
    seconds = extract("epoch", runs.c.updated_at - runs.c.created_at)
    completed = runs.c.status == RunState.completed.value
    rows = await conn.execute(
        select(
            minute,
            func.count().filter(completed).label("completed"),
            func.count().filter(runs.c.status == RunState.failed.value).label("failed"),
            func.percentile_cont(0.5).within_group(seconds).filter(completed).label("p50"),
            func.percentile_cont(0.95).within_group(seconds).filter(completed).label("p95"),
        )
        .where(
            and_(
                runs.c.project == project,
                runs.c.created_at >= since - LOOKBACK,
                runs.c.updated_at >= since,
                runs.c.updated_at < until,
                runs.c.status.in_([RunState.completed.value, RunState.failed.value]),
            )
        )
        .group_by(minute)
        .order_by(minute)
    )
    return [MinuteOfRuns(r.minute, r.completed, r.failed, r.p50, r.p95) for r in rows]
