"""The transformer's stage: run the batch's transform steps and route on."""

from __future__ import annotations

from mnemo.core.dispatch import run_chain
from mnemo.core.groups import GroupCache
from mnemo.deps import Deps
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.stages.routing import TRANSFORMER_KINDS, Emit, forward


async def transform_stage(deps: Deps, groups: GroupCache, event: StageEvent) -> list[Emit]:
    """Run `transform` / `transform_with_context` steps from `event.step_id`, then hand the
    batch to whatever step follows (another service's topic)."""
    batch = event.batch
    group = await groups.get(batch.project, batch.group)
    step = group.step(event.step_id)
    if step.kind not in TRANSFORMER_KINDS:
        raise TypeError(f"step '{step.id}' is {step.kind}, not a transform")
    following = await run_chain(deps, group, step, batch, TRANSFORMER_KINDS)
    return forward(following, batch, event.run_started)
