"""Erasing for real: one user's data in a project, or one memory with its traces.

`erase_user` runs after the user's tombstone is committed (`mnemo.store.tombstones.record`),
so every pipeline transaction that could still write the user's data has either finished
(and is seen here) or will see the tombstone. Rows an in-flight transaction holds locked
(a bus record being processed, buffer items being flushed) are skipped, not waited for:
that transaction meets the tombstone when it persists and drops them itself.

Pipeline transactions that meet the tombstone redact the runs they hold (a buffer sweep, a
stage taking an erased user's record), and may do so while the erase is still running. A
redacted run no longer names its user, so the erase takes the user's runs from two reads:
one in the tombstone's own transaction (`runs_before`, before anything else can see the
tombstone) and one in its own. Its report then counts every run it covers whoever redacted
it first, and what those runs wrote is found through their ids.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, String, case, cast, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.erasure import (
    ERASED_RUN_ERROR,
    STOPPED_RUN_ERROR,
    WITHDRAWN_RUN_ERROR,
    ErasureReport,
)
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.retention import Redaction
from mnemo.store import runs as run_store
from mnemo.store.forget import forget_memories, forget_user
from mnemo.store.schema import buffer_items, bus_records, drafts, memories, memory_versions, runs
from mnemo.store.tenancy import memory_owner_filter

OPEN_STATES = (RunState.running.value, RunState.in_buffer.value)
ERASED_SCOPE_KEY = "erased"  # a redacted run's scope key (the real one hashes the user id)


async def runs_before(
    conn: AsyncConnection, project: str, user_id: str, seq: int
) -> dict[str, str]:
    """The user's runs admitted before the erase numbered `seq`: run id -> status."""
    found = await conn.execute(
        select(runs.c.run_id, runs.c.status).where(
            runs.c.project == project, runs.c.user_id == user_id, runs.c.admitted_seq < seq
        )
    )
    return {r.run_id: r.status for r in found}


async def erase_user(
    conn: AsyncConnection,
    project: str,
    user_id: str,
    seq: int,
    now: datetime,
    seen: Mapping[str, str] | None = None,
) -> ErasureReport:
    """Remove the memories, versions, drafts, buffer items and queued bus records of the
    user's runs admitted before the erase numbered `seq`, and redact those runs. `seen`:
    the runs `runs_before` found in the tombstone's transaction (see the module doc)."""
    covered = {**await runs_before(conn, project, user_id, seq), **(seen or {})}
    run_ids = list(covered)
    owned = memories.c.user_id == user_id
    if run_ids:  # shared (not user-scoped) memories that the user's adds wrote
        owned = or_(owned, memories.c.run_ids.overlap(cast(run_ids, ARRAY(String))))
    memory_ids = list(
        (
            await conn.execute(
                delete(memories)
                .where(memories.c.project == project, owned)
                .returning(memories.c.id)
            )
        ).scalars()
    )
    report = ErasureReport(erased=len(memory_ids), memories=len(memory_ids))
    report.versions = await _count(
        conn, delete(memory_versions).where(memory_versions.c.memory_id.in_(memory_ids))
    )
    report.drafts = await _count(
        conn,
        delete(drafts).where(
            drafts.c.project == project,
            or_(
                drafts.c.run_id.in_(run_ids),
                drafts.c.candidate["memory_id"].astext.in_(memory_ids),
            ),
        ),
    )
    report.buffer_items = await _delete_unlocked(
        conn, buffer_items, (buffer_items.c.project == project) & buffer_items.c.run_id.in_(run_ids)
    )
    report.bus_records = await _delete_unlocked(conn, bus_records, _bus_records_of(run_ids))
    await forget_memories(conn, memory_ids)  # memory over time: links, recalls, gate decisions
    await forget_user(conn, project, user_id)
    await redact_erased_runs(conn, run_ids, now)
    # Every covered run ends redacted, by this erase or by a transaction that met its
    # tombstone a moment before (the open ones end failed), unless its row went meanwhile
    # (an add the Kafka gateway refused).
    kept = await conn.execute(select(runs.c.run_id).where(runs.c.run_id.in_(run_ids)))
    redacted = set(kept.scalars())
    report.runs_redacted = len(redacted)
    report.runs_stopped = sum(covered[r] in OPEN_STATES for r in redacted)
    return report


async def redact_erased_runs(
    conn: AsyncConnection, run_ids: Collection[str], now: datetime
) -> None:
    """Empty the runs' content (input, user, properties, error) and mark them erased; runs
    still open end `failed` with the reason. Runs redacted before are left as they are."""
    if not run_ids:
        return
    is_open = runs.c.status.in_(OPEN_STATES)
    await conn.execute(
        update(runs)
        .where(
            runs.c.run_id.in_(list(run_ids)),
            runs.c.redaction.is_distinct_from(Redaction.erased.value),  # once is enough
        )
        .values(
            user_id=None,
            properties={},
            raw_input={},
            recalled=None,
            scope_key=ERASED_SCOPE_KEY,
            error=case(
                (is_open, STOPPED_RUN_ERROR),
                (runs.c.error.is_not(None), ERASED_RUN_ERROR),
                else_=None,
            ),
            status=case((is_open, RunState.failed.value), else_=runs.c.status),
            redaction=Redaction.erased.value,
            redacted_at=now,
            updated_at=now,
        )
    )


async def withdraw(
    conn: AsyncConnection, erased: Collection[str], others: Collection[str], now: datetime
) -> None:
    """A batch met a tombstone: its erased runs are redacted (if the erase has not done it
    yet) and end failed if still open; the batch's other open runs fail with a note that
    a retry re-drives them (their raw input is kept). Nothing of the batch is persisted."""
    await redact_erased_runs(conn, erased, now)
    if others:
        await run_store.set_status(conn, others, RunState.failed, now, error=WITHDRAWN_RUN_ERROR)


async def erase_memory(
    conn: AsyncConnection,
    project: str,
    group: GroupConfig,
    user_id: str | None,
    memory_id: str,
    now: datetime,
) -> bool:
    """Erase one memory: the row, its versions, drafts and buffer items naming it or holding
    its text, and the raw input of runs whose only effect was this memory. Raw inputs that
    made other memories too keep their text (the user's erase or retention removes it)."""
    row = (
        await conn.execute(
            delete(memories)
            .where(memories.c.id == memory_id, memory_owner_filter(project, group, user_id))
            .returning(memories.c.content, memories.c.run_ids)
        )
    ).first()
    if row is None:
        return False
    versions = (
        await conn.execute(
            delete(memory_versions)
            .where(memory_versions.c.memory_id == memory_id)
            .returning(memory_versions.c.content, memory_versions.c.run_id)
        )
    ).all()
    texts = sorted({row.content, *(v.content for v in versions)})
    await forget_memories(conn, [memory_id])
    in_group = (drafts.c.project == project) & (drafts.c.group == group.name)
    await conn.execute(
        delete(drafts).where(
            in_group,
            or_(
                drafts.c.candidate["memory_id"].astext == memory_id,
                drafts.c.candidate["content"].astext.in_(texts),
            ),
        )
    )
    await _delete_unlocked(
        conn,
        buffer_items,
        (buffer_items.c.project == project)
        & (buffer_items.c.group == group.name)
        & buffer_items.c.payload["content"].astext.in_(texts),
    )
    makers = {*row.run_ids, *(v.run_id for v in versions if v.run_id)}
    await _redact_single_effect_runs(conn, makers, memory_id, now)
    return True


async def _redact_single_effect_runs(
    conn: AsyncConnection, run_ids: Iterable[str], memory_id: str, now: datetime
) -> None:
    candidates = (
        await conn.execute(
            select(runs.c.run_id, runs.c.committed_operations).where(
                runs.c.run_id.in_(list(run_ids)), runs.c.redaction.is_(None)
            )
        )
    ).all()
    only_this = [r.run_id for r in candidates if _touched(r.committed_operations) == {memory_id}]
    if not only_this:
        return
    await conn.execute(
        update(runs)
        .where(runs.c.run_id.in_(only_this))
        .values(raw_input={}, redaction=Redaction.memory_erased.value, redacted_at=now)
    )
    await conn.execute(  # their sliding-window entries hold the same raw text
        delete(buffer_items).where(
            buffer_items.c.run_id.in_(only_this), buffer_items.c.payload["units"].is_not(None)
        )
    )


def _touched(operations: Mapping[str, Any] | None) -> set[str]:
    return {op["memory_id"] for ops in (operations or {}).values() for op in ops}


def _bus_records_of(run_ids: list[str]) -> Any:
    """Queued pipeline records that carry these runs: their run records and flushes."""
    payload = bus_records.c.payload
    return or_(
        (payload["kind"].astext == "run") & payload["run_id"].astext.in_(run_ids),
        (payload["kind"].astext == "flush")
        & payload["run_ids"].has_any(cast(run_ids, ARRAY(String))),
    )


async def _delete_unlocked(conn: AsyncConnection, table: Any, where: Any) -> int:
    """Delete matching rows that no other transaction holds locked (see the module doc)."""
    free = select(table.c.id).where(where).with_for_update(skip_locked=True)
    return await _count(conn, delete(table).where(table.c.id.in_(free)))


async def _count(conn: AsyncConnection, statement: Any) -> int:
    return int((await conn.execute(statement)).rowcount)
