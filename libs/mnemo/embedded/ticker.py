"""Time triggers: periodically flush buffers whose idle, since-first or interval time is up,
and, at start and then less often, redact raw inputs past their group's retention, drop
expired idempotency keys, finish erases cut short (`core.erasure`) and (every `consolidation_tick_seconds`) publish the consolidation checks that are due.

A buffer whose step its group no longer has (the group was replaced) is given up: its
runs fail with an error naming the step, and can be retried through the current pipeline.
"""

from __future__ import annotations

import asyncio
import logging
import time

from mnemo import metrics
from mnemo.core.failures import describe, is_transient
from mnemo.core.retention_sweep import sweep_retention
from mnemo.core.stale_buffers import current_buffer, fail_held_runs
from mnemo.domain.pipeline import MissingStep
from mnemo.domain.requests import NotFound
from mnemo.embedded.consolidation import publish_due
from mnemo.embedded.runner import PipelineRunner
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
            step = current_buffer(group, buffer.step_id)
        except NotFound:
            continue
        except MissingStep as exc:
            await give_up(runner, buffer, exc)
            continue
        if step.mode != "batch":
            continue
        async with runner.deps.db.begin() as tx:
            reason = await runner.flush_if_due(tx, step, buffer)
        if reason:
            flushed += 1
            runner.bus.wake()  # committed: a worker can claim the flush now
    return flushed


async def give_up(runner: PipelineRunner, buffer: buffers.BufferKey, exc: Exception) -> None:
    """Fail the open runs held in `buffer` with `exc`, and drop its items."""
    async with runner.deps.db.begin() as tx:
        held = await buffers.items(tx, buffer, lock=True)
        await fail_held_runs(tx, [item.run_id for item in held], exc, runner.deps.clock.now())
        await buffers.remove(tx, [item.id for item in held])
    log.warning("buffer %s/%s given up: %s", buffer.group, buffer.step_id, exc)


async def run_ticker(
    runner: PipelineRunner, every_seconds: float, stop: asyncio.Event, sweep_seconds: float
) -> None:
    last_sweep = consolidated_at = float("-inf")
    while not stop.is_set():
        try:
            await tick(runner)
            if time.monotonic() - last_sweep >= sweep_seconds:
                last_sweep = time.monotonic()
                await sweep_retention(runner.deps.db, runner.deps.clock)
            if (
                time.monotonic() - consolidated_at
                >= runner.deps.settings.consolidation_tick_seconds
            ):
                consolidated_at = time.monotonic()
                await publish_due(runner.deps, runner.groups, runner.bus)
        except Exception as exc:
            if is_transient(exc):  # an outage: one line, not a traceback a second
                log.warning("buffer ticker: database unavailable (%s)", describe(exc, 300))
            else:
                log.exception("buffer ticker failed; retrying")
        try:
            await asyncio.wait_for(stop.wait(), every_seconds)
        except TimeoutError:
            pass
