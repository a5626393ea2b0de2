"""Memory over time in the Engine facade: recall tracking around searches and adds, and the
reads of consolidation and reconsolidation (a rule's sources, scopes' trigger state, a run's
gate decisions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.core.recall_log import Recall, RecallLog
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryStatus, Run
from mnemo.domain.search import MemoryQuery
from mnemo.settings import Settings
from mnemo.store import consolidation, reconsolidations


@dataclass(frozen=True)
class ScopeState:
    """One consolidation scope of a group: who and where, and its trigger state."""

    user_id: str | None
    properties: dict[str, str]
    new_episodes: int
    first_new_at: datetime | None
    last_new_at: datetime | None
    last_pass_at: datetime | None
    last_error: str | None


class Dynamics:
    def __init__(self, db: AsyncEngine, clock: Clock, settings: Settings) -> None:
        self.db = db
        self.clock = clock
        self.tracking = settings.recall_tracking
        self.recalls = RecallLog(
            db,
            clock,
            capacity=settings.recall_queue_size,
            flush_seconds=settings.recall_flush_seconds,
            retention_seconds=settings.recall_retention_seconds,
        )

    def recalled(self, query: MemoryQuery, group: GroupConfig, found: Sequence[Memory]) -> None:
        """Note what a search returned (the search's scope: user and scope properties)."""
        if not self.tracking or not found:
            return
        keys = group.scope_property_keys
        self.recalls.record(
            Recall(
                project=query.project,
                group=query.group,
                user_id=query.user_id,
                properties={k: v for k, v in query.properties.items() if k in keys},
                memory_ids=[m.id for m in found],
                at=self.clock.now(),
            )
        )

    async def before_add(self, project: str, group: str, user_id: str | None) -> None:
        """An add's gate must see the recalls its scope made just before it: write them."""
        if self.tracking:
            await self.recalls.flush_for(project, group, user_id)

    async def with_rules(self, found: list[Memory]) -> list[Memory]:
        """Consolidated memories marked with the rule that holds them."""
        ids = [m.id for m in found if m.status == MemoryStatus.consolidated]
        if not ids:
            return found
        async with self.db.connect() as conn:
            rules = await consolidation.rules_of(conn, ids)
        return [
            m.model_copy(update={"consolidated_into": rules[m.id]}) if m.id in rules else m
            for m in found
        ]

    async def with_gate(self, run: Run) -> Run:
        """The run with its reconsolidation gate's decisions, if a gate ran."""
        async with self.db.connect() as conn:
            found = await reconsolidations.for_runs(conn, [run.run_id])
        decisions = found.get(run.run_id)
        return run.model_copy(update={"reconsolidation": decisions}) if decisions else run

    async def sources(
        self, project: str, group: GroupConfig, user_id: str | None, memory_id: str
    ) -> list[Memory] | None:
        async with self.db.connect() as conn:
            return await consolidation.sources_of(conn, project, group, user_id, memory_id)

    async def scopes(self, project: str, group: str) -> list[ScopeState]:
        async with self.db.connect() as conn:
            rows = await consolidation.of_group(conn, project, group)
        return [
            ScopeState(
                user_id=r.user_id,
                properties=dict(r.properties or {}),
                new_episodes=r.new_count,
                first_new_at=r.first_new_at,
                last_new_at=r.last_new_at,
                last_pass_at=r.last_pass_at,
                last_error=r.last_error,
            )
            for r in rows
        ]

    async def close(self) -> None:
        await self.recalls.close()
