"""Step dispatch: the one way both transports execute a group's pipeline steps.

`run_step` applies extract, transform or transform_with_context to a batch in place;
`run_chain` runs consecutive steps of the kinds one worker handles and returns the first
step it does not (a buffer, a commit, or another service's step); `takes_raw_input` says
where a run may enter.
"""

from __future__ import annotations

import time
from collections.abc import Collection

from mnemo import metrics
from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.group import GroupConfig
from mnemo.domain.pipeline import (
    BufferStep,
    ExtractStep,
    Step,
    TransformStep,
    TransformWithContextStep,
)
from mnemo.steps.extract import extract
from mnemo.steps.transform import transform
from mnemo.steps.transform_with_context import transform_with_context
from mnemo.tracing.pipeline import step_span

# The steps that only transform a batch in memory (no buffer, no commit).
LLM_KINDS = frozenset({"extract", "transform", "transform_with_context"})


async def run_step(deps: Deps, group: GroupConfig, step: Step, batch: Batch) -> None:
    """Apply one extract / transform / transform_with_context step to `batch` in place."""
    if isinstance(step, ExtractStep):
        batch.candidates = [*batch.candidates, *await extract(deps, group, step, batch)]
        if batch.deferred_extract is None:  # else transform_with_context still reads them
            batch.inputs = []
    elif isinstance(step, TransformStep):
        batch.candidates = await transform(deps, group, step, batch)
    elif isinstance(step, TransformWithContextStep):
        batch.candidates = await transform_with_context(deps, group, step, batch)
    else:
        raise TypeError(f"step '{step.id}' ({step.kind}) is not an LLM step")


async def run_chain(
    deps: Deps, group: GroupConfig, step: Step | None, batch: Batch, kinds: Collection[str]
) -> Step | None:
    """Run steps from `step` while their kind is in `kinds`; return the first other step
    (None once the pipeline has ended)."""
    while step is not None and step.kind in kinds:
        started = time.perf_counter()
        with step_span(step, batch) as span:
            await run_step(deps, group, step, batch)
            span.set("mnemo.batch.candidates_out", len(batch.candidates))
        metrics.STEP_LATENCY.labels(step=step.kind).observe(time.perf_counter() - started)
        step = group.pipeline.following(step)
    return step


def takes_raw_input(step: Step) -> bool:
    """Steps that see raw inputs: extraction, and sliding windows that feed it."""
    return isinstance(step, ExtractStep) or (
        isinstance(step, BufferStep) and step.mode == "sliding_window"
    )
