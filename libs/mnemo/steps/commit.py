"""Commit: stage the batch's drafts and apply them atomically, idempotently, unless an erase
came first (the tombstone check of both modes)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo import metrics
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import CommitStep
from mnemo.steps.base import Batch, Deps
from mnemo.store import commits, erasure, retention, runs, tombstones


async def commit(
    deps: Deps, tx: AsyncConnection, group: GroupConfig, step: CommitStep, batch: Batch
) -> commits.Operations | None:
    """Persist in `tx`. Returns None when this batch was committed before (a redelivery),
    and `withdrawn` operations when it holds runs of a user erased since their admission
    (then nothing is persisted, and the pipeline stops here)."""
    now = deps.clock.now()
    erased = await tombstones.guard(tx, batch.run_ids)
    if erased:
        others = [r for r in batch.run_ids if r not in erased]
        await erasure.withdraw(tx, erased, others, now)
        return commits.Operations(withdrawn=True)
    batch_id = f"{batch.batch_id}:{step.id}"
    writes = [c for c in batch.candidates if c.op != "delete" and not group.topic(c.topic).internal]
    contents = sorted({c.content for c in writes})
    vectors = await deps.embedder.embed(contents) if contents else []
    await commits.stage(tx, batch_id, batch.project, group.name, batch.candidates, now)
    ops = await commits.apply(
        tx, batch_id, batch.project, group, dict(zip(contents, vectors, strict=True)), now
    )
    if ops is not None:
        completed = await runs.record_commit(tx, ops.by_run, batch.run_ids, now)
        if group.retention.drop_raw_input_at_commit:
            await retention.drop_at_commit(tx, batch.run_ids, now)
        metrics.RUNS.labels(status=RunState.completed.value).inc(len(completed))
        for created_at in completed:
            metrics.RUN_LATENCY.observe(max(0.0, (now - created_at).total_seconds()))
    return ops
