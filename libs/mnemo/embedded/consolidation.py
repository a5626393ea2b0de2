"""Consolidation on the embedded bus: checks are records keyed by the scope's own key, so a
scope's passes run one at a time, in order, inside the record's transaction.

A count trigger publishes a check in the commit that counted the episodes; the ticker
publishes checks for time triggers (`publish_due`). A pass that fails for a reason that is
not transient is recorded on the scope (`last_error`) and acknowledged: the next trigger
retries it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.consolidation_pass import run_pass
from mnemo.core.groups import GroupCache
from mnemo.deps import Deps
from mnemo.domain.consolidation import EpisodeScope
from mnemo.domain.group import GroupConfig
from mnemo.embedded.bus.base import CONSOLIDATE, PIPELINE_CHANNEL, Bus
from mnemo.steps.consolidate import apply_pass, due_scopes, plan_pass, record_failure
from mnemo.store.schema import bus_records


def check_payload(scope: EpisodeScope) -> dict[str, Any]:
    return {"kind": CONSOLIDATE, "scope": scope.as_payload(), "run_ids": []}


async def consolidate(
    deps: Deps, groups: GroupCache, tx: AsyncConnection, payload: dict[str, Any]
) -> None:
    """Run the scope's pass if its trigger still fires (`core.consolidation_pass`), inside
    the record's transaction."""
    scope = EpisodeScope.from_payload(payload["scope"])

    async def attempt(group: GroupConfig) -> None:
        async with tx.begin_nested():
            plan = await plan_pass(deps, tx, group, scope)
            if plan is not None:
                await apply_pass(deps, tx, group, scope, plan)

    async def record(error: str) -> None:
        await record_failure(deps, tx, scope, error)

    await run_pass(groups, scope, attempt, record)


async def publish_due(deps: Deps, groups: GroupCache, bus: Bus) -> int:
    """Publish a check for every scope whose time trigger fires and that has none waiting."""
    published = 0
    async with deps.db.begin() as tx:
        for _, scope in await due_scopes(tx, groups, deps.clock.now()):
            waiting = await tx.scalar(select(exists().where(bus_records.c.scope_key == scope.key)))
            if not waiting:
                await bus.publish(tx, PIPELINE_CHANNEL, scope.key, check_payload(scope))
                published += 1
    if published:
        bus.wake(published)
    return published
