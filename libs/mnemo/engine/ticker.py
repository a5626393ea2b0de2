"""Time triggers: periodically flush buffers whose idle, since-first or interval time is up,
and (every `consolidation_tick_seconds`) publish the consolidation checks that are due."""

from __future__ import annotations

import asyncio
import logging

from mnemo import metrics
from mnemo.domain.pipeline import BufferStep
from mnemo.domain.requests import NotFound
from mnemo.engine.consolidation import publish_due
from mnemo.engine.runner import PipelineRunner
from mnemo.store import buffers

log = logging.getLogger(__name__)


async def tick(runner: PipelineRunner) -> int:
    """Flush every due buffer once. Returns how many flushed."""
    flushed = 0
    async with runner.deps.db.connect() as conn:
        pending = await buffers.pending(conn)
    metrics.BUFFER_ITEMS.set(sum(size for *_, size in pending))
    for buffer, *_ in pending:
        try:
            group = await runner.groups.get(buffer.project, buffer.group)
            step = group.pipeline.step(buffer.step_id)
        except (NotFound, StopIteration):
            continue
        if not isinstance(step, BufferStep) or step.mode != "batch":
            continue
        async with runner.deps.db.begin() as tx:
            reason = await runner.flush_if_due(tx, step, buffer)
        if reason:
            flushed += 1
            runner.bus.wake()  # committed: a worker can claim the flush now
    return flushed


async def run_ticker(runner: PipelineRunner, every_seconds: float, stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    consolidated_at = float("-inf")
    while not stop.is_set():
        try:
            await tick(runner)
        except Exception:
            log.exception("buffer ticker failed; retrying")
        if loop.time() - consolidated_at >= runner.deps.settings.consolidation_tick_seconds:
            consolidated_at = loop.time()
            try:
                await publish_due(runner.deps, runner.groups, runner.bus)
            except Exception:
                log.exception("consolidation ticker failed; retrying")
        try:
            await asyncio.wait_for(stop.wait(), every_seconds)
        except TimeoutError:
            pass
