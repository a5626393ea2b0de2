"""Run rows: what was added, where it is in its pipeline, and what it committed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from sqlalchemy import and_, bindparam, delete, func, insert, or_, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.memory import CommittedOperation, CommittedOperations, Run, RunState
from mnemo.domain.retention import Redaction
from mnemo.store import run_events
from mnemo.store.schema import groups, memories, runs

_OPEN = (RunState.running.value, RunState.in_buffer.value)
# `admit`'s extra column: when the run's group was last stored.
GROUP_STORED_AT = "group_stored_at"
RETRY_NOTE = "[retry not started: "

# What `run_from_row` reads: listings skip the raw input, which may be large.
_SUMMARY = tuple(c for c in runs.c if c.name not in ("raw_input", "properties", "scope_key"))


@dataclass(frozen=True)
class RunInput:
    """The add behind a run: its raw input and where in the pipeline it started."""

    raw_input: dict[str, Any]
    properties: dict[str, str]
    scope_key: str
    starting_step_id: str
    # Why the input is gone (mnemo.domain.retention.Redaction: erased, expired, ...); None.
    redaction: str | None = None


_CREATE = insert(runs)


async def create(conn: AsyncConnection, rows: Sequence[Mapping[Any, Any]]) -> None:
    """Insert new run rows (one statement, compiled once: executed with the list of rows,
    which must all have the same keys)."""
    if rows:
        await conn.execute(_CREATE, [dict(row) for row in rows])


async def get(conn: AsyncConnection, project: str, run_id: str) -> Run | None:
    row = (
        await conn.execute(select(runs).where(runs.c.run_id == run_id, runs.c.project == project))
    ).first()
    return run_from_row(row._mapping) if row else None


async def get_many(conn: AsyncConnection, project: str, run_ids: Sequence[str]) -> list[Run]:
    """The project's runs among `run_ids`, newest first; ids of other projects are skipped."""
    if not run_ids:
        return []
    rows = await conn.execute(
        select(*_SUMMARY)
        .where(runs.c.run_id.in_(list(run_ids)), runs.c.project == project)
        .order_by(runs.c.created_at.desc(), runs.c.run_id.desc())
    )
    return [run_from_row(row._mapping) for row in rows]


async def recent(
    conn: AsyncConnection,
    project: str,
    *,
    status: RunState | None = None,
    user_id: str | None = None,
    before: tuple[datetime, str] | None = None,
    limit: int = 50,
) -> list[Run]:
    """The project's runs, newest first; `before` (created_at, run_id) pages past a seen run."""
    stmt = select(*_SUMMARY).where(runs.c.project == project)
    if status is not None:
        stmt = stmt.where(runs.c.status == status.value)
    if user_id is not None:
        stmt = stmt.where(runs.c.user_id == user_id)
    if before is not None:
        at, run_id = before
        stmt = stmt.where(tuple_(runs.c.created_at, runs.c.run_id) < tuple_(at, run_id))
    stmt = stmt.order_by(runs.c.created_at.desc(), runs.c.run_id.desc()).limit(limit)
    return [run_from_row(row._mapping) for row in await conn.execute(stmt)]


async def submitted(conn: AsyncConnection, project: str, run_id: str) -> RunInput | None:
    """What the add of a run carried (kept for retry), or None outside the project."""
    row = (
        await conn.execute(
            select(
                runs.c.raw_input,
                runs.c.properties,
                runs.c.scope_key,
                runs.c.starting_step_id,
                runs.c.redaction,
            ).where(runs.c.run_id == run_id, runs.c.project == project)
        )
    ).first()
    if row is None:
        return None
    return RunInput(
        raw_input=row.raw_input,
        properties=row.properties,
        scope_key=row.scope_key,
        starting_step_id=row.starting_step_id,
        redaction=row.redaction,
    )


# Read for every run a worker takes: built once (statements built per call cost CPU to
# build and to find in SQLAlchemy's compiled cache).
_RAW = select(runs).where(runs.c.run_id == bindparam("run_id"))


async def raw(conn: AsyncConnection, run_id: str) -> Mapping[Any, Any] | None:
    row = (await conn.execute(_RAW, {"run_id": run_id})).first()
    return row._mapping if row else None


class Admission(Enum):
    """Why the pipeline did not take a queued run (`admit`)."""

    unknown = "unknown"  # no row: an outside producer's new run, or an add the gateway refused
    withdrawn = "withdrawn"  # a retry the Engine gave up on before the pipeline took it


def _group_stored_at() -> Any:
    return (
        select(groups.c.updated_at)
        .where(groups.c.project == runs.c.project, groups.c.name == runs.c.group)
        .scalar_subquery()
    )


async def admit(conn: AsyncConnection, run_id: str, now: datetime) -> Mapping[Any, Any] | Admission:
    """The pipeline takes a run's queued record: its row, now marked admitted (a record
    seen again keeps its first admission), or why it must not be processed. The row also
    says when its group was last stored (GROUP_STORED_AT), so a process whose cached group
    is older loads it again: the run goes through the group as it is now. Admission and
    `refuse` / `fail_retry` exclude each other: each acts only while `admitted_at` is NULL."""
    taken = (
        await conn.execute(
            update(runs)
            .where(
                runs.c.run_id == run_id,
                or_(runs.c.admitted_at.is_not(None), runs.c.status != RunState.failed.value),
            )
            .values(admitted_at=func.coalesce(runs.c.admitted_at, now))
            .returning(*runs.c, _group_stored_at().label(GROUP_STORED_AT))
        )
    ).first()
    if taken is not None:
        return taken._mapping
    exists = (await conn.execute(select(runs.c.run_id).where(runs.c.run_id == run_id))).first()
    return Admission.withdrawn if exists else Admission.unknown


async def refuse(conn: AsyncConnection, run_id: str) -> bool:
    """Withdraw a new run the pipeline has not taken (its row goes). False if it was taken:
    the add went through after all."""
    gone = await conn.execute(
        delete(runs)
        .where(runs.c.run_id == run_id, runs.c.admitted_at.is_(None))
        .returning(runs.c.run_id)
    )
    return gone.first() is not None


async def accepted(conn: AsyncConnection, run_ids: Iterable[str]) -> set[str]:
    """The run ids that have a row (an add the gateway refused has none)."""
    ids = list(run_ids)
    if not ids:
        return set()
    found = await conn.execute(select(runs.c.run_id).where(runs.c.run_id.in_(ids)))
    return {row.run_id for row in found}


async def set_status(
    conn: AsyncConnection,
    run_ids: Iterable[str],
    status: RunState,
    now: datetime,
    error: str | None = None,
) -> None:
    """Move open runs to `status`; finished runs keep theirs. Waiters of runs moved to a
    terminal status are notified at commit."""
    ids = list(run_ids)
    await conn.execute(
        update(runs)
        .where(runs.c.run_id.in_(ids), runs.c.status.in_(_OPEN))
        .values(status=status.value, error=error, updated_at=now)
    )
    if status.terminal:
        await run_events.notify_finished(conn, ids)


async def ensure(conn: AsyncConnection, row: Mapping[str, Any]) -> bool:
    """Insert the run row unless it exists (an outside producer's run seen again).
    Returns whether it was inserted."""
    result = await conn.execute(
        pg_insert(runs).values(**row).on_conflict_do_nothing().returning(runs.c.run_id)
    )
    return result.first() is not None


async def reopen_failed(conn: AsyncConnection, run_ids: Iterable[str], now: datetime) -> None:
    """Move failed runs back to running (a DLQ replay); other runs keep their status, and
    so do runs whose content is gone (erased, or past retention)."""
    await conn.execute(
        update(runs)
        .where(
            runs.c.run_id.in_(list(run_ids)),
            runs.c.status == RunState.failed.value,
            runs.c.redaction.is_(None),
        )
        .values(status=RunState.running.value, error=None, updated_at=now)
    )


_CLAIM_FAILED = text("""
    UPDATE runs AS r SET status = :running, error = NULL, updated_at = :now, admitted_at = NULL
    FROM runs AS before
    WHERE r.run_id = :run_id AND r.project = :project AND r.status = :failed
      AND r.redaction IS NULL AND before.run_id = r.run_id
    RETURNING r.*, before.error AS previous_error
""")


async def claim_failed(
    conn: AsyncConnection, project: str, run_id: str, now: datetime
) -> tuple[Mapping[Any, Any], str | None] | None:
    """Reopen a failed run for a retry: (its row, the error it had), or None when it is not
    failed, has no raw input left (erased, retention), or is not there. The row lock makes
    concurrent claims of one run exclusive."""
    row = (
        await conn.execute(
            _CLAIM_FAILED,
            {
                "run_id": run_id,
                "project": project,
                "now": now,
                "running": RunState.running.value,
                "failed": RunState.failed.value,
            },
        )
    ).first()
    if row is None:
        return None
    m = row._mapping
    return {k: v for k, v in m.items() if k != "previous_error"}, m["previous_error"]


async def set_starting_step(conn: AsyncConnection, run_id: str, index: int, step_id: str) -> None:
    """Where a retried run enters its group's current pipeline (its old step is gone)."""
    await conn.execute(
        update(runs)
        .where(runs.c.run_id == run_id)
        .values(starting_step=index, starting_step_id=step_id)
    )


async def fail_retry(
    conn: AsyncConnection,
    run_id: str,
    claimed: bool,
    previous_error: str | None,
    note: str,
    now: datetime,
) -> bool:
    """A retry that could not be handed to the pipeline: the run is failed again with its
    original error plus a note. `claimed`: the claim committed (the run is `running` now).
    Returns False when the pipeline took the retried run meanwhile (it was delivered after
    all): the run is left alone."""
    kept = (previous_error or "").split(RETRY_NOTE)[0].rstrip()
    error = f"{kept}\n{RETRY_NOTE}{note}]" if kept else f"{RETRY_NOTE}{note}]"
    expected = RunState.running if claimed else RunState.failed
    conditions = [runs.c.run_id == run_id, runs.c.status == expected.value]
    if claimed:
        conditions.append(runs.c.admitted_at.is_(None))
    result = await conn.execute(
        update(runs)
        .where(*conditions)
        .values(status=RunState.failed.value, error=error, updated_at=now)
        .returning(runs.c.run_id)
    )
    failed = result.first() is not None
    if failed:
        await run_events.notify_finished(conn, [run_id])
    return failed


# Completes a batch's runs in one round trip: locks them (in a fixed order), appends what
# each committed to its `committed_operations` (per kind: :ops -> run id -> kind -> entries;
# a run's column starts as JSON null), announces them (`run_events`: the first payload) and
# returns each run's status before (one row of nulls when no run was found).
_RECORD_COMMIT = text("""
    WITH old AS (
        SELECT run_id, status, created_at FROM runs
        WHERE run_id = ANY(:run_ids) ORDER BY run_id FOR UPDATE
    ), done AS (
        UPDATE runs AS r SET
            committed_operations =
                CASE WHEN jsonb_typeof(r.committed_operations) = 'object'
                          AND r.committed_operations <> '{}'
                     THEN r.committed_operations
                     ELSE '{"created": [], "updated": [], "deleted": []}' END
                || coalesce((
                    SELECT jsonb_object_agg(e.key, coalesce(r.committed_operations -> e.key, '[]')
                                                   || e.value)
                    FROM jsonb_each(CAST(:ops AS jsonb) -> r.run_id) AS e
                ), '{}'),
            updated_at = :now, status = :completed, error = NULL, produced_by = :produced_by
        FROM old WHERE r.run_id = old.run_id
        RETURNING old.status, old.created_at
    ), note AS (SELECT pg_notify(:channel, :payload))
    SELECT done.status, done.created_at FROM note LEFT JOIN done ON true
""")


async def record_commit(
    conn: AsyncConnection,
    by_run: Mapping[str, Mapping[str, list[str]]],
    run_ids: Iterable[str],
    now: datetime,
    produced_by: str | None = None,
) -> list[datetime]:
    """Complete the batch's runs and append what each committed, and what produced it
    (`produced_by`: the model's name or "offline").

    Returns the creation times of the runs this call completed (for end-to-end latency).
    """
    stamp = now.isoformat()
    run_ids = list(dict.fromkeys(run_ids))
    if not run_ids:
        return []
    ops = {
        run_id: {
            kind: [{"memory_id": i, "committed_at": stamp} for i in ids]
            for kind, ids in by_run[run_id].items()
        }
        for run_id in run_ids
        if run_id in by_run
    }
    first, *more = run_events.payloads(run_ids)
    parameters = {
        "channel": run_events.CHANNEL,
        "payload": first,
        "run_ids": run_ids,
        "ops": json.dumps(ops),
        "now": now,
        "completed": RunState.completed.value,
        "produced_by": produced_by,
    }
    rows = (await conn.execute(_RECORD_COMMIT, parameters)).all()
    for payload in more:
        await conn.execute(run_events.NOTIFY, {"channel": run_events.CHANNEL, "payload": payload})
    return [row.created_at for row in rows if row.status in _OPEN]


async def oldest_running_age(conn: AsyncConnection) -> float | None:
    """Seconds since the oldest `running` run was added (database clock), or None."""
    age = (
        await conn.execute(
            select(func.extract("epoch", func.now() - func.min(runs.c.created_at))).where(
                runs.c.status == RunState.running.value
            )
        )
    ).scalar_one()
    return None if age is None else float(age)


async def open_counts(conn: AsyncConnection) -> dict[str, int]:
    """Open (`running` or `in_buffer`) runs per project."""
    rows = await conn.execute(
        select(runs.c.project, func.count())
        .where(runs.c.status.in_(_OPEN))
        .group_by(runs.c.project)
    )
    return {row[0]: int(row[1]) for row in rows}


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
        erased=m.get("redaction") == Redaction.erased.value,
        produced_by=m.get("produced_by"),
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        committed_operations=CommittedOperations(
            **{k: [CommittedOperation(**op) for op in v] for k, v in ops.items()}
        )
        if ops
        else CommittedOperations(),
    )


async def producers_of(conn: AsyncConnection, project: str, ids: Sequence[str]) -> dict[str, str]:
    """What produced the current version of each of `ids` (memories of `project`): the
    `produced_by` label of the run that wrote it last, where that run recorded one (a
    consolidation pass, an import or a run from before migration 0017 has none)."""
    if not ids:
        return {}
    rows = await conn.execute(
        select(memories.c.id, runs.c.produced_by)
        .join(
            runs,
            and_(
                runs.c.project == memories.c.project, runs.c.run_id == memories.c.written_by_run_id
            ),
        )
        .where(
            memories.c.project == project,
            memories.c.id.in_(list(ids)),
            runs.c.produced_by.is_not(None),
        )
    )
    return {row.id: row.produced_by for row in rows}
