"""Transform with context: reconcile new candidates with related committed memories.

One structured LLM call decides for each retrieved and each new memory: keep, rewrite
(content) or delete. Rewrites of committed memories keep their history at commit.
"""

from __future__ import annotations

from mnemo.domain.event_time import Span
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, Memory
from mnemo.domain.pipeline import TransformWithContextStep
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.prompts import transform_with_context as twc_prompt
from mnemo.steps.base import Batch, Deps
from mnemo.store.rows import memory_from_row
from mnemo.store.search import vector_search
from mnemo.store.tenancy import visible_memories


async def transform_with_context(
    deps: Deps, group: GroupConfig, step: TransformWithContextStep, batch: Batch
) -> list[Candidate]:
    # Bounded topics were merged at extract; internal fragments are never reconciled.
    passthrough = [c for c in batch.candidates if _skips(group, c)]
    fresh = [c for c in batch.candidates if not _skips(group, c) and c.op == "create"]
    if not fresh:
        return batch.candidates
    existing = await _related(deps, group, step, batch, fresh)
    if not existing:
        return batch.candidates
    context = twc_prompt.Context(
        instructions=step.instructions,
        existing=[
            twc_prompt.ExistingMemory(
                id=m.id, topic=m.topic, content=m.content, event_time=m.event_time_end
            )
            for m in existing.values()
        ],
        new=[
            twc_prompt.NewMemory(
                index=i, topic=c.topic, content=c.content, event_time=c.event_time_end
            )
            for i, c in enumerate(fresh)
        ],
    )
    # A rewrite of an existing memory rests on the new evidence; commit joins it to the
    # memory's own range.
    news = Span.join(c.span for c in fresh)
    answer = await deps.llm.complete(twc_prompt.PROMPT, context)
    out = list(passthrough) + [
        c for c in batch.candidates if c not in passthrough and c not in fresh
    ]
    new_decisions = {d.index: d for d in answer.new}
    for i, candidate in enumerate(fresh):
        decision = new_decisions.get(i)
        if decision is None or decision.action == "keep":
            out.append(candidate)
        elif decision.action == "rewrite" and decision.content and decision.content.strip():
            out.append(candidate.model_copy(update={"content": decision.content.strip()}))
    for verdict in answer.existing:
        memory = existing.get(verdict.id)
        if memory is None or verdict.action == "keep":
            continue  # unknown ids are ignored: the model may not invent targets
        if verdict.action == "rewrite" and not (verdict.content and verdict.content.strip()):
            continue
        out.append(
            Candidate(
                content=(verdict.content or memory.content).strip(),
                topic=memory.topic,
                user_id=memory.user_id,
                properties=memory.properties or {},
                run_id=batch.run_id,
                op="update" if verdict.action == "rewrite" else "delete",
                memory_id=memory.id,
            ).dated(news)
        )
    return out


def _skips(group: GroupConfig, candidate: Candidate) -> bool:
    topic = group.topic(candidate.topic)
    return topic.is_bounded or topic.internal


async def _related(
    deps: Deps,
    group: GroupConfig,
    step: TransformWithContextStep,
    batch: Batch,
    fresh: list[Candidate],
) -> dict[str, Memory]:
    """Committed memories related to any new candidate, in the candidate's own scope."""
    selectors = tuple(
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
    if not selectors:
        return {}
    query = MemoryQuery(
        project=batch.project,
        group=group.name,
        topics=selectors,
        user_id=batch.user_id,
        limit=step.context_limit,
    )
    where = visible_memories(query, group)
    vectors = await deps.embedder.embed([c.content for c in fresh])
    found: dict[str, Memory] = {}
    async with deps.db.connect() as conn:
        for vector in vectors:
            for row, _score in await vector_search(conn, where, vector, step.context_limit):
                found.setdefault(row.id, memory_from_row(row))
    return found
