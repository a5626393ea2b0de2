"""Transform: one LLM pass over the whole batch."""

from __future__ import annotations

import logging

from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.event_time import Span
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate
from mnemo.domain.pipeline import TransformStep
from mnemo.prompts import transform as transform_prompt
from mnemo.prompts.extract import TopicBrief

log = logging.getLogger(__name__)


async def transform(
    deps: Deps, group: GroupConfig, step: TransformStep, batch: Batch
) -> list[Candidate]:
    if not batch.candidates:
        return []
    names = step.output_topics or tuple(t.name for t in group.topics)
    outputs = [group.topic(n) for n in names]
    context = transform_prompt.Context(
        instructions=step.instructions,
        output_topics=[
            TopicBrief(name=t.name, description=t.description, is_bounded=t.is_bounded)
            for t in outputs
        ],
        items=[
            transform_prompt.Item(topic=c.topic, content=c.content, event_time=c.event_time_end)
            for c in batch.candidates
        ],
    )
    spans = [c.span for c in batch.candidates]
    answer = await deps.llm.complete(transform_prompt.PROMPT, context)
    allowed = set(names)
    out = []
    for memory in answer.memories:
        if memory.topic not in allowed or not memory.content.strip():
            log.warning("transform: dropped a memory for topic %r", memory.topic)
            continue
        out.append(
            Candidate(
                content=memory.content.strip(),
                topic=memory.topic,
                user_id=batch.user_id,
                properties=batch.properties,
                run_id=batch.run_id,
            ).dated(_evidence(spans, memory.evidence) or Span.of([batch.event_time]))
        )
    return out


def _evidence(spans: list[Span | None], evidence: list[int]) -> Span | None:
    """The range of the cited items; the whole batch's when none (or no valid index) is
    cited: a batch transform (a daily roll-up) rests on all of it."""
    cited = [spans[i] for i in evidence if 0 <= i < len(spans)]
    return Span.join(cited or spans)
