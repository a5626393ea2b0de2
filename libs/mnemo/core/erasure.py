"""Erasing a user (GDPR Art. 17), the same way in both modes: tombstone first, then data.

1. The transport says where its raw log ends (Kafka: the raw topic's end offsets; the
   embedded bus keeps no log), so records appended before the erase can be recognised
   later by their offsets, without comparing clocks.
2. The tombstone is committed under the user's exclusive erase lock
   (`mnemo.store.tombstones`): from then on no pipeline transaction persists anything of
   the user's earlier runs.
3. The user's memories, versions, drafts, buffer items and queued records are removed and
   their runs redacted (`mnemo.store.erasure`). Kafka's own copies (topics, the buffer and
   window tables) are dropped by the stage services, which consult the tombstones.

Erase is a durable job. Step 2 also records the erase as pending (`pending_erasures`, with
the user id and the runs it covers); step 3 removes that row and stamps the tombstone's
`completed_at` in its own transaction. An erase cut short anywhere (kill -9, a lost
connection) is finished by `finish_pending_erasures`, which both modes run at start-up and
periodically (the embedded ticker; the Kafka committer's sweep timer). Repeating an erase by
hand also works: the tombstone is renewed and covers every run admitted before the repeat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.clock import Clock
from mnemo.core.failures import Backoff, is_transient
from mnemo.core.transport import RunTransport
from mnemo.domain.erasure import ErasureReport
from mnemo.store import erasure, pending_erasures, tombstones

log = logging.getLogger(__name__)
TOMBSTONE_ATTEMPTS = 3
# A sweep leaves an erase this long to its own request, which is about to clean up.
PENDING_GRACE_SECONDS = 10.0


async def erase_user(
    db: AsyncEngine, transport: RunTransport, clock: Clock, project: str, user_id: str
) -> ErasureReport:
    """Erase the (normalized) user's data in `project`; returns what was removed."""
    position = await transport.raw_log_position()
    seq, seen = await _record_tombstone(db, project, user_id, position, clock)
    async with db.begin() as tx:
        # Waits if a sweep took this erase meanwhile; then only what it left is removed.
        await pending_erasures.claim(tx, project, user_id, wait=True)
        report = await _clean_up(tx, project, user_id, seq, seen, clock)
    log.info("erased a user of project %s: %s", project, report.model_dump())
    return report


async def finish_pending_erasures(
    db: AsyncEngine, clock: Clock, grace_seconds: float = PENDING_GRACE_SECONDS
) -> int:
    """Finish every erase whose tombstone was written at least `grace_seconds` ago and whose
    clean-up never committed (its process died, its connection broke). Several processes may
    run this at once: each erase is finished by one of them. Returns how many it finished."""
    async with db.connect() as conn:
        due = await pending_erasures.waiting(conn, clock.now() - timedelta(seconds=grace_seconds))
    finished = 0
    for project, user_id in due:
        async with db.begin() as tx:
            pending = await pending_erasures.claim(tx, project, user_id, wait=False)
            if pending is None:
                continue
            report = await _clean_up(tx, project, user_id, pending.seq, pending.runs, clock)
        finished += 1
        log.warning(
            "finished an interrupted erase of a user of project %s: %s",
            project,
            report.model_dump(),
        )
    return finished


async def _clean_up(
    tx: AsyncConnection,
    project: str,
    user_id: str,
    seq: int,
    seen: Mapping[str, str] | None,
    clock: Clock,
) -> ErasureReport:
    now = clock.now()
    report = await erasure.erase_user(tx, project, user_id, seq, now, seen)
    await pending_erasures.complete(tx, project, user_id, seq, now)
    report.completed_at = now
    return report


async def _record_tombstone(
    db: AsyncEngine,
    project: str,
    user_id: str,
    position: dict[str, object] | None,
    clock: Clock,
) -> tuple[int, dict[str, str]]:
    """Commit the tombstone, with the user's runs it covers as they stood then (run id ->
    status: `mnemo.store.erasure` says why); a deadlock with pipeline transactions (which
    Postgres resolves by aborting one side) or a dropped connection is retried."""
    backoff = Backoff(0.05, cap=1.0)
    for attempt in range(1, TOMBSTONE_ATTEMPTS + 1):
        try:
            async with db.begin() as tx:
                now = clock.now()
                seq = await tombstones.record(tx, project, user_id, position, now)
                seen = await erasure.runs_before(tx, project, user_id, seq)
                await pending_erasures.add(tx, project, user_id, seq, seen, now)
                return seq, seen
        except Exception as exc:
            if attempt == TOMBSTONE_ATTEMPTS or not is_transient(exc):
                raise
            await asyncio.sleep(backoff.next())
    raise AssertionError("unreachable")
