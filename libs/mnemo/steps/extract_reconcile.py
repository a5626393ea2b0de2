"""Extract and reconcile in one LLM call, when the pipeline and the scope allow it.

The engine takes this path for an extract step followed by transform_with_context (then
commit), without a reconsolidation gate, on a model (never the offline heuristics, whose
calls cost nothing): the committed memories of the add's scope close to its input (the
input's vector, transform_with_context's `min_similarity` floor) are shown to the extract
prompt (`prompts.extract_reconcile`), and the answer holds both the memories to create and
a verdict per shown memory. transform_with_context then asks only about close memories the
call was not shown (a second call, rarely).

The extractor runs ahead of the committer, so an earlier run of the scope may commit in
between: at commit, transform_with_context turns a verdict on a memory that changed since
into a new memory to reconcile, and asks about every close memory the call did not see as
it is now (`revalidate`). Nothing close: extract alone (transform_with_context decides as before). The close memories
do not fit `extract_reconcile_max_chars`: extract alone, then transform_with_context, as
two calls.
"""

from __future__ import annotations

from datetime import datetime

from mnemo.core.answer_guards import check_ids, check_rewrites, check_share
from mnemo.domain.event_time import Span
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, Memory
from mnemo.domain.pipeline import ExtractStep, TransformWithContextStep
from mnemo.llm.base import produced_by
from mnemo.llm.offline.text import normalized
from mnemo.prompts import extract as extract_prompt
from mnemo.prompts import extract_reconcile as combined_prompt
from mnemo.prompts import transform_with_context as twc_prompt
from mnemo.steps.base import Batch, Deps
from mnemo.steps.transform_with_context import related_to

TASK = "extract_reconcile"


def reconcile_step(
    deps: Deps, group: GroupConfig, step: ExtractStep, batch: Batch
) -> TransformWithContextStep | None:
    """The transform_with_context step this extract may answer for in the same call, or
    None when the combined call does not apply."""
    following = group.pipeline.following(step)
    if not isinstance(following, TransformWithContextStep):
        return None
    if group.reconsolidation is not None or len(batch.inputs) != 1:
        return None  # the gate decides on recalled memories first; one input per call
    if deps.settings.extract_reconcile_max_chars <= 0 or produced_by(deps.llm) == "offline":
        return None
    return following


async def combined_context(
    deps: Deps,
    group: GroupConfig,
    step: ExtractStep,
    batch: Batch,
    context: extract_prompt.Context,
) -> tuple[combined_prompt.Context, dict[str, Memory]] | None:
    """The combined call's context and the memories it shows; None to extract alone."""
    twc = reconcile_step(deps, group, step, batch)
    if twc is None:
        return None
    text = "\n".join(u.text for u in context.units)
    vectors = await deps.embedder.embed([text])
    related = await related_to(deps, group, twc, batch, vectors)
    floor = twc.min_similarity
    if floor is None:
        floor = deps.settings.reconcile_min_similarity
    close = {k: m for k, (m, cosine) in related.items() if cosine >= floor}
    if not close:
        return None
    combined = combined_prompt.Context(
        extract=context,
        existing=[
            twc_prompt.ExistingMemory(
                id=m.id, topic=m.topic, content=m.content, event_time=m.event_time_end
            )
            for m in close.values()
        ],
        reconcile_instructions=twc.instructions,
    )
    if combined_prompt.size(combined) > deps.settings.extract_reconcile_max_chars:
        return None  # two calls: extract alone, then transform_with_context
    return combined, close


def apply(
    deps: Deps,
    batch: Batch,
    answer: combined_prompt.Response,
    existing: dict[str, Memory],
    created: list[Candidate],
    times: list[datetime],
) -> list[Candidate]:
    """The candidates of a combined answer: the memories to create (restatements of a shown
    memory dropped) and the rewrites and deletes of shown memories, checked by the same
    guards as transform_with_context's answer."""
    check_ids(TASK, (v.id for v in answer.existing), existing)
    check_rewrites(TASK, [v.content for v in answer.existing if v.action == "rewrite"])
    deleted = sum(1 for v in answer.existing if v.action == "delete")
    check_share(TASK, deleted, len(existing), deps.settings.destructive_max_share)
    said = {(m.topic, normalized(m.content)) for m in existing.values()}
    out = [c for c in created if (c.topic, normalized(c.content)) not in said]
    news = Span.join(c.span for c in created) or Span.of(times)
    decided: set[str] = set()
    for verdict in answer.existing:
        memory = existing[verdict.id]
        if verdict.action == "keep" or memory.id in decided:
            continue
        if verdict.action == "rewrite" and normalized(verdict.content or "") == normalized(
            memory.content
        ):
            continue  # the same statement reworded: no new version
        decided.add(memory.id)
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
    shown = {m.id: m.content for m in existing.values()}
    batch.reconciled_with = {**(batch.reconciled_with or {}), **shown}
    return out
