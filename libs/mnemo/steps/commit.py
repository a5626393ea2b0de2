"""Commit: stage the batch's drafts and apply them atomically, idempotently, unless an erase
came first (the tombstone check of both modes)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo import metrics
from mnemo.contracts.llm import produced_by
from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import CommitStep
from mnemo.domain.reconsolidation import GateDecision
from mnemo.steps.consolidate import note_episodes
from mnemo.store import commits, erasure, reconsolidations, retention, runs, tombstones
from mnemo.tracing.memory import memory_span
from mnemo.tracing.pipeline import step_span
from mnemo.tracing.spans import AttributeValue


async def commit(
    deps: Deps, tx: AsyncConnection, group: GroupConfig, step: CommitStep, batch: Batch
) -> commits.Operations | None:
    """Persist in `tx`. Returns None when this batch was committed before (a redelivery),
    and `withdrawn` operations when it holds runs of a user erased since their admission
    (then nothing is persisted, and the pipeline stops here).

    Besides the memories, it records the reconsolidation gate's decisions with what became
    of them, and counts new episodes for consolidation (`Operations.due`: scopes whose
    count trigger fires now). Traced as a step span holding the GenAI `update_memory` span."""
    with (
        step_span(step, batch) as span,
        memory_span("update_memory", batch.project, batch.group) as update,
    ):
        ops = await _commit(deps, tx, group, step, batch)
        outcome = _outcome(ops)
        span.update(outcome)
        update.update({k.replace("mnemo.commit.", "mnemo.memory."): v for k, v in outcome.items()})
    return ops


def _outcome(ops: commits.Operations | None) -> dict[str, AttributeValue | None]:
    if ops is None:
        return {"mnemo.commit.outcome": "already_committed"}
    if ops.withdrawn:
        return {"mnemo.commit.outcome": "withdrawn"}
    count = {
        kind: sum(len(by_kind[kind]) for by_kind in ops.by_run.values())
        for kind in ("created", "updated", "deleted")
    }
    return {"mnemo.commit.outcome": "applied"} | {
        f"mnemo.commit.memories_{kind}": n for kind, n in count.items()
    }


async def _commit(
    deps: Deps, tx: AsyncConnection, group: GroupConfig, step: CommitStep, batch: Batch
) -> commits.Operations | None:
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
    embeddings = dict(zip(contents, vectors, strict=True))
    ops = await commits.apply(tx, batch_id, batch.project, group, batch.candidates, embeddings, now)
    if ops is not None:
        producer = produced_by(deps.llm)
        completed = await runs.record_commit(tx, ops.by_run, batch.run_ids, now, producer)
        metrics.RUNS_PRODUCED.labels(produced_by=producer).inc(len(completed))
        if group.retention.drop_raw_input_at_commit:
            await retention.drop_at_commit(tx, batch.run_ids, now)
        metrics.RUNS.labels(status=RunState.completed.value).inc(len(completed))
        for created_at in completed:
            metrics.RUN_LATENCY.observe(max(0.0, (now - created_at).total_seconds()))
        gate = _settled(batch.gate, ops.gate)
        await reconsolidations.record(
            tx, project=batch.project, group=group.name, run_id=batch.run_id,
            user_id=batch.user_id, gate=gate, now=now,
        )  # fmt: skip
        ops.due = await note_episodes(tx, batch.project, group, ops.created, now)
    return ops


def _settled(gate: list[GateDecision], written: dict[str, str | None]) -> list[GateDecision]:
    """The gate's decisions with the commit's outcome: a rewrite is applied unless the
    commit refused it (the hourly cap, an unchanged content, a memory gone meanwhile)."""
    out = []
    for decision in gate:
        if decision.memory_id in written:
            reason = written[decision.memory_id]
            decision = decision.model_copy(update={"applied": reason is None, "reason": reason})
        outcome = "written" if decision.applied else "not_written"
        metrics.GATE_DECISIONS.labels(decision=decision.decision, outcome=outcome).inc()
        out.append(decision)
    return out
