"""The committed memories an add may reconcile with, and when extract and reconcile can be
one LLM call.

Shared by transform_with_context (close to the new candidates) and the combined call of
`steps.extract_reconcile` (close to the input), so both read the same scope.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, select

from mnemo.contracts.llm import produced_by
from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.event_time import Span
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, Memory
from mnemo.domain.pipeline import ExtractStep, TransformWithContextStep
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.llm.offline.text import normalized
from mnemo.prompts import transform_with_context as twc_prompt
from mnemo.store.database import AUTOCOMMIT_READS
from mnemo.store.rows import MEMORY_COLUMNS, memory_from_row
from mnemo.store.search import vector_search
from mnemo.store.tenancy import visible_memories


def combined_step(
    deps: Deps, group: GroupConfig, step: ExtractStep, batch: Batch
) -> TransformWithContextStep | None:
    """The transform_with_context step right after `step` when the engine makes extract and
    reconcile one call for this batch (`steps.extract_reconcile`), else None.

    Only on a model (the offline heuristics' calls cost nothing), without a reconsolidation
    gate (it decides on recalled memories before reconcile), for one raw input to extract.
    """
    following = group.pipeline.following(step)
    if not isinstance(following, TransformWithContextStep):
        return None
    if group.reconsolidation is not None or deps.settings.extract_reconcile_max_chars <= 0:
        return None
    if len(batch.inputs) != 1 or batch.inputs[0].pre_extracted is not None:
        return None
    return None if produced_by(deps.llm) == "offline" else following


def selectors(group: GroupConfig, batch: Batch) -> tuple[TopicSelector, ...]:
    """The reconcilable topics (not bounded, not internal) the batch's scope can address."""
    return tuple(
        TopicSelector(
            name=t.name,
            properties={k: batch.properties.get(k) for k in t.scoping.scope_properties} or None,
        )
        for t in group.topics
        if not t.is_bounded
        and not t.internal
        and (batch.user_id is not None or not t.scoping.user_scoped)
        and all(k in batch.properties for k in t.scoping.scope_properties)
    )


def _scope(
    group: GroupConfig, step: TransformWithContextStep, batch: Batch
) -> ColumnElement[bool] | None:
    """The filter of the batch's reconcilable memories; None when it can address none."""
    chosen = selectors(group, batch)
    if not chosen:
        return None
    query = MemoryQuery(
        project=batch.project,
        group=group.name,
        topics=chosen,
        user_id=batch.user_id,
        limit=step.context_limit,
    )
    return visible_memories(query, group)


async def whole_scope(
    deps: Deps, group: GroupConfig, step: TransformWithContextStep, batch: Batch
) -> list[Memory] | None:
    """Every committed memory of the batch's scope (reconcilable topics), newest first, when
    there are at most `step.context_limit`: all of them are the nearest, whatever the input,
    so nothing needs embedding to choose them. None when there are more."""
    where = _scope(group, step, batch)
    if where is None:
        return []
    # No ORDER BY: the scan stops after limit + 1 rows, however large the scope.
    stmt = select(*MEMORY_COLUMNS).where(where).limit(step.context_limit + 1)
    async with deps.db.connect() as conn:
        await conn.execution_options(isolation_level=AUTOCOMMIT_READS)
        rows = (await conn.execute(stmt)).all()
    if len(rows) > step.context_limit:
        return None
    found = [memory_from_row(row) for row in rows]
    return sorted(found, key=lambda m: (m.updated_at, m.id), reverse=True)


async def related_to(
    deps: Deps,
    group: GroupConfig,
    step: TransformWithContextStep,
    batch: Batch,
    vectors: list[list[float]],
) -> dict[str, tuple[Memory, float]]:
    """Committed memories of the batch's scope (reconcilable topics) closest to any of
    `vectors` (`step.context_limit` each), with the highest cosine similarity to one."""
    where = _scope(group, step, batch)
    if where is None or not vectors:
        return {}
    found: dict[str, tuple[Memory, float]] = {}
    async with deps.db.connect() as conn:
        await conn.execution_options(isolation_level=AUTOCOMMIT_READS)
        for vector in vectors:
            for row, score in await vector_search(conn, where, vector, step.context_limit):
                cosine = 2.0 * score - 1.0  # vector_search scores (cos + 1) / 2
                if row.id not in found or cosine > found[row.id][1]:
                    found[row.id] = (found.get(row.id, (memory_from_row(row), 0.0))[0], cosine)
    return found


def revision(
    memory: Memory, verdict: twc_prompt.ExistingDecision, batch: Batch, news: Span | None
) -> Candidate | None:
    """The write a model's verdict on a shown memory asks for: a rewrite (with history) or
    a delete, dated by the news; None for a keep, or a rewrite that only rewords it (a
    restatement writes no new version)."""
    if verdict.action == "keep":
        return None
    if verdict.action == "rewrite" and normalized(verdict.content or "") == normalized(
        memory.content
    ):
        return None
    return Candidate(
        content=(verdict.content or memory.content).strip(),
        topic=memory.topic,
        user_id=memory.user_id,
        properties=memory.properties or {},
        run_id=batch.run_id,
        op="update" if verdict.action == "rewrite" else "delete",
        memory_id=memory.id,
    ).dated(news)
