"""What `mnemo replay` and `mnemo dlq replay` must not bring back from Kafka's logs.

A Kafka log cannot have one record redacted, so the replays consult Postgres instead: the
runs table (whose rows erasure and retention redact) and the user tombstones. A record is
skipped, with the reason, when its run's content is gone (`erased`, `expired`,
`dropped_at_commit`, `memory_erased`), when its user was erased after it was appended
(`erased`), when it is older than its group's `raw_input_days` (`expired`), or when the
gateway refused the add it carries (`refused`: it has no run row).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.domain.group import GroupConfig
from mnemo.domain.retention import Redaction
from mnemo.domain.scope import normalize_user_id
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.reader import Stored
from mnemo.store import groups as group_store
from mnemo.store import tombstones
from mnemo.store.schema import runs

REASONS = {
    Redaction.erased: "erased",
    Redaction.expired: "expired",
    Redaction.committed: "dropped_at_commit",
    Redaction.memory_erased: "memory_erased",
}


async def gone_runs(
    conn: AsyncConnection, run_ids: Iterable[str]
) -> tuple[set[str], dict[str, str]]:
    """(the runs that have a row, the reason of each whose content is gone)."""
    ids = list(dict.fromkeys(run_ids))
    if not ids:
        return set(), {}
    rows = (
        await conn.execute(select(runs.c.run_id, runs.c.redaction).where(runs.c.run_id.in_(ids)))
    ).all()
    gone = {r.run_id: REASONS[Redaction(r.redaction)] for r in rows if r.redaction}
    intact = [r.run_id for r in rows if not r.redaction]
    gone.update({run_id: "erased" for run_id in await tombstones.erased_among(conn, intact)})
    return {r.run_id for r in rows}, gone


@dataclass
class RawRecordFilter:
    """Decides, record by record, whether a raw-log record may be re-run (`skip` is None)."""

    conn: AsyncConnection
    now: datetime
    _tombstones: dict[tuple[str, str], tombstones.Tombstone | None] = field(default_factory=dict)
    _groups: dict[tuple[str, str], GroupConfig | None] = field(default_factory=dict)

    async def skip(
        self,
        stored: Stored,
        event: RawEvent,
        run_id: str,
        present: set[str],
        gone: dict[str, str],
    ) -> str | None:
        """The reason to skip the record (`present`, `gone`: see `gone_runs` for its run)."""
        if run_id in gone:
            return gone[run_id]
        if run_id not in present and event.origin == "gateway":
            return "refused"
        user = normalize_user_id(event.user_id)
        if user is not None:
            tombstone = await self._tombstone(event.project, user)
            if tombstone is not None and tombstone.covers_raw_record(
                stored.topic, stored.partition, stored.offset, stored.timestamp
            ):
                return "erased"
        group = await self._group(event.project, event.group)
        max_age = group.retention.max_age if group is not None else None
        added = stored.timestamp or event.created_at
        if max_age is not None and added is not None and added < self.now - max_age:
            return "expired"
        return None

    async def _tombstone(self, project: str, user: str) -> tombstones.Tombstone | None:
        if (project, user) not in self._tombstones:
            self._tombstones[(project, user)] = await tombstones.lookup(self.conn, project, user)
        return self._tombstones[(project, user)]

    async def _group(self, project: str, name: str) -> GroupConfig | None:
        if (project, name) not in self._groups:
            self._groups[(project, name)] = await group_store.get(self.conn, project, name)
        return self._groups[(project, name)]
