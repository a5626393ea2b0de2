"""The committer's consolidation stage: run a scope's pass (`steps.consolidate`), and find
the scopes whose time triggers fire.

A pass reads and asks the LLM outside any transaction, then writes in one transaction through
the commit path. A failure that is not transient is recorded on the scope (`last_error`) and
the record is done: the next trigger retries the pass, so nothing goes to the DLQ.
"""

from __future__ import annotations

from mnemo.core.consolidation_pass import run_pass
from mnemo.core.groups import GroupCache
from mnemo.deps import Deps
from mnemo.domain.group import GroupConfig
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.consolidation import ConsolidationCheck
from mnemo.kafka.stages.routing import Emit
from mnemo.steps.consolidate import apply_pass, due_scopes, plan_pass, record_failure


async def consolidate_stage(deps: Deps, groups: GroupCache, check: ConsolidationCheck) -> None:
    """Run the scope's pass (`core.consolidation_pass`): planned outside any transaction,
    applied in one."""
    scope = check.scope

    async def attempt(group: GroupConfig) -> None:
        async with deps.db.connect() as conn:
            plan = await plan_pass(deps, conn, group, scope)
        if plan is not None:
            async with deps.db.begin() as tx:
                await apply_pass(deps, tx, group, scope, plan)

    async def record(error: str) -> None:
        async with deps.db.begin() as tx:
            await record_failure(deps, tx, scope, error)

    await run_pass(groups, scope, attempt, record)


def check_emits(checks: list[ConsolidationCheck]) -> list[Emit]:
    return [Emit(ChannelKind.consolidation, c.scope.key, c) for c in checks]


async def due_checks(deps: Deps, groups: GroupCache) -> list[Emit]:
    """Checks for every scope whose time trigger fires now."""
    async with deps.db.connect() as conn:
        due = await due_scopes(conn, groups, deps.clock.now())
    return check_emits([ConsolidationCheck.of(scope) for _, scope in due])
