"""Extract: turn raw inputs into candidate memories of the group's topics."""

from __future__ import annotations

import logging
from datetime import datetime

from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.event_time import Span, unit_times
from mnemo.domain.group import GroupConfig
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import Candidate
from mnemo.domain.pipeline import ExtractStep
from mnemo.domain.topics import Topic
from mnemo.prompts import extract as extract_prompt
from mnemo.steps import related
from mnemo.store import bounded
from mnemo.store.database import AUTOCOMMIT_READS

log = logging.getLogger(__name__)


async def extract(
    deps: Deps, group: GroupConfig, step: ExtractStep, batch: Batch
) -> list[Candidate]:
    if related.combined_step(deps, group, step, batch) is not None:
        # One call extracts and reconciles, in the committer, in the scope's order (run N+1
        # after run N's commit): transform_with_context runs it (`steps.extract_reconcile`).
        batch.deferred_extract = step.id
        return []
    out: list[Candidate] = pre_extracted_candidates(batch)
    for raw in batch.inputs:
        if raw.pre_extracted is None:
            out.extend(await _extract_with_llm(deps, group, step, batch, raw))
    return out


def pre_extracted_candidates(batch: Batch) -> list[Candidate]:
    """Caller-extracted items become candidates as they are: no LLM involved."""
    return [
        Candidate(
            content=item.content.strip(),
            topic=item.topic,
            user_id=batch.user_id,
            properties=batch.properties,
            run_id=batch.run_id,
        ).dated(Span.of([raw.pre_extracted.created_at or batch.event_time]))
        for raw in batch.inputs
        if raw.pre_extracted is not None
        for item in raw.pre_extracted.items
    ]


async def _extract_with_llm(
    deps: Deps, group: GroupConfig, step: ExtractStep, batch: Batch, raw: AddInput
) -> list[Candidate]:
    built = await llm_context(deps, group, step, batch, raw)
    if built is None:
        return []
    context, times = built
    answer = await deps.llm.complete(extract_prompt.PROMPT, context)
    return candidates(group, batch, answer.memories, context, times)


async def llm_context(
    deps: Deps, group: GroupConfig, step: ExtractStep, batch: Batch, raw: AddInput
) -> tuple[extract_prompt.Context, list[datetime]] | None:
    """The extract prompt's context for one raw input, and its units' times; None when the
    add can write no topic."""
    briefs = [
        extract_prompt.TopicBrief(
            name=t.name,
            description=t.description,
            is_bounded=t.is_bounded,
            current=await _current_bounded(deps, group, batch, t.name) if t.is_bounded else None,
            learned=group.consolidation is not None and t.name == group.consolidation.rule_topic,
            episodic=group.consolidation is not None
            and t.name in group.consolidation.episode_topics,
        )
        for t in group.topics
        if _writable(t, batch)
    ]
    if not briefs:
        return None
    times = unit_times(raw, batch.event_time or deps.clock.now())
    context = extract_prompt.Context(
        topics=briefs,
        input_type=raw.input_type,
        units=[
            extract_prompt.DatedUnit(text=u, at=t) for u, t in zip(_units(raw), times, strict=True)
        ],
        window=batch.window,
        instructions=step.instructions,
    )
    return context, times


def candidates(
    group: GroupConfig,
    batch: Batch,
    memories: list[extract_prompt.ExtractedMemory],
    context: extract_prompt.Context,
    times: list[datetime],
) -> list[Candidate]:
    """The candidates of extracted memories: known topics only, one per bounded topic,
    dated by their evidence."""
    allowed = {t.name for t in context.topics}
    out: list[Candidate] = []
    seen_bounded: set[str] = set()
    for memory in memories:
        content = memory.content.strip()
        if memory.topic not in allowed or not content:
            log.warning("extract: dropped a memory for unknown topic %r", memory.topic)
            continue
        if group.topic(memory.topic).is_bounded:
            if memory.topic in seen_bounded:
                continue  # a bounded topic holds one memory per scope
            seen_bounded.add(memory.topic)
        out.append(
            Candidate(
                content=content,
                topic=memory.topic,
                user_id=batch.user_id,
                properties=batch.properties,
                run_id=batch.run_id,
            ).dated(evidence_span(times, memory.evidence))
        )
    return out


def evidence_span(times: list[datetime], evidence: list[int]) -> Span | None:
    """The event-time range of the evidence units; all units when none (or no valid index)
    is named, so a model that cites nothing never leaves a memory undated."""
    cited = [times[i] for i in evidence if 0 <= i < len(times)]
    return Span.of(cited or times)


def _units(raw: AddInput) -> list[str]:
    if raw.conversation is not None:
        units = []
        for m in raw.conversation.messages:
            text = m.content
            for call in m.tool_calls or []:
                fn = call.function or call.custom
                args = (
                    call.function.arguments
                    if call.function
                    else (call.custom.input if call.custom else "")
                )
                text += f" [tool call {fn.name if fn else '?'}({args})]"
            units.append(f"{m.effective_role}: {text}".strip())
        return units
    return raw.text_units()


def _writable(topic: Topic, batch: Batch) -> bool:
    """Only topics whose scope this add can address (a user, the needed properties)."""
    if topic.scoping.user_scoped and batch.user_id is None:
        return False
    return all(k in batch.properties for k in topic.scoping.scope_properties)


async def _current_bounded(
    deps: Deps, group: GroupConfig, batch: Batch, topic_name: str
) -> str | None:
    topic = group.topic(topic_name)
    async with deps.db.connect() as conn:
        await conn.execution_options(isolation_level=AUTOCOMMIT_READS)
        memory = await bounded.current(
            conn, batch.project, group, topic, batch.user_id, batch.properties
        )
    return memory.content if memory else None
