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

If step 3 fails, the erase can simply be repeated: the tombstone is renewed and covers
every run admitted before the repeat.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.core.failures import Backoff, is_transient
from mnemo.core.transport import RunTransport
from mnemo.domain.erasure import ErasureReport
from mnemo.store import erasure, tombstones

log = logging.getLogger(__name__)
TOMBSTONE_ATTEMPTS = 3


async def erase_user(
    db: AsyncEngine, transport: RunTransport, clock: Clock, project: str, user_id: str
) -> ErasureReport:
    """Erase the (normalized) user's data in `project`; returns what was removed."""
    position = await transport.raw_log_position()
    seq, seen = await _record_tombstone(db, project, user_id, position, clock)
    async with db.begin() as tx:
        report = await erasure.erase_user(tx, project, user_id, seq, clock.now(), seen)
    log.info("erased a user of project %s: %s", project, report.model_dump())
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
                seq = await tombstones.record(tx, project, user_id, position, clock.now())
                return seq, await erasure.runs_before(tx, project, user_id, seq)
        except Exception as exc:
            if attempt == TOMBSTONE_ATTEMPTS or not is_transient(exc):
                raise
            await asyncio.sleep(backoff.next())
    raise AssertionError("unreachable")
