"""The committer's stage: apply a batch's drafts to Postgres in one transaction, idempotently."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from mnemo import metrics
from mnemo.core.dispatch import run_chain
from mnemo.core.groups import GroupCache
from mnemo.deps import Deps
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import CommitStep, Step
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.consolidation import ConsolidationCheck
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.events.status import RunStatusEvent
from mnemo.kafka.stages.consolidate import check_emits
from mnemo.kafka.stages.routing import COMMITTER_LEAD_KINDS, Emit, forward
from mnemo.steps.commit import commit


@dataclass
class CommitOutcome:
    applied: bool
    emits: list[Emit] = field(default_factory=list)


async def commit_stage(
    deps: Deps, groups: GroupCache, event: StageEvent, service: str
) -> CommitOutcome:
    """Commit the batch (`steps.commit`, deduplicated by batch id) and route what follows.

    A redelivered batch changes nothing and emits nothing, nor does a batch holding runs of
    a user erased since (the commit step failed its runs). An applied one emits `completed`
    for its runs, for a commit step with `next` forwards the batch, and emits a consolidation
    check for each scope whose count trigger its new episodes fired.
    """
    batch = event.batch
    group = await groups.get(batch.project, batch.group)
    step: Step | None = group.step(event.step_id)
    if not isinstance(step, CommitStep):
        step = await run_chain(deps, group, step, batch, COMMITTER_LEAD_KINDS)
    if not isinstance(step, CommitStep):
        raise TypeError(f"the committer cannot run step {step.id if step else None!r}")
    started = time.perf_counter()
    async with deps.db.begin() as tx:
        ops = await commit(deps, tx, group, step, batch)
    metrics.STEP_LATENCY.labels(step="commit").observe(time.perf_counter() - started)
    if ops is None or ops.withdrawn:  # a redelivery; or an erased user's (runs failed)
        return CommitOutcome(applied=False)
    now = deps.clock.now()
    status = RunStatusEvent(
        run_ids=batch.run_ids,
        status=RunState.completed,
        scope_key=batch.scope_key,
        at=now,
        service=service,
    )
    emits = [Emit(ChannelKind.status, batch.scope_key, status)]
    emits += forward(group.pipeline.following(step), batch, event.run_started)
    emits += check_emits([ConsolidationCheck.of(scope) for scope in ops.due])
    return CommitOutcome(applied=True, emits=emits)
