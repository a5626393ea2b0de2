"""Extract and reconcile in one LLM call, for an extract -> transform_with_context -> commit
pipeline (`related.combined_step` says when).

The extract step then defers its call: the batch keeps its input and transform_with_context,
which runs in the committer in the scope's order (run N+1 after run N's commit), extracts
it here. The scope's committed memories nearest to the input (its vector; up to the step's
`context_limit`, all of them without embedding the input when the scope has no more) are
shown to the extract prompt (`prompts.extract_reconcile`); the answer
holds both the memories to create and a verdict per shown memory. transform_with_context
then asks only about memories close to a candidate (its `min_similarity` floor) that the
call did not see, which takes a second call; when the call saw every memory of the scope,
it embeds and searches nothing more.

Showing memories below the floor costs tokens, not calls: the extract call is made anyway.
The scope has no memory: the extract prompt alone (transform_with_context decides as ever).
The nearest memories do not fit `extract_reconcile_max_chars`: the farthest are left out
until they do; when not even one fits, the extract prompt, then transform_with_context's,
as two calls.
"""

from __future__ import annotations

from datetime import datetime

from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.event_time import Span
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, Memory
from mnemo.domain.pipeline import ExtractStep, TransformWithContextStep
from mnemo.llm.offline.text import normalized
from mnemo.prompts import extract as extract_prompt
from mnemo.prompts import extract_reconcile as combined_prompt
from mnemo.prompts import transform_with_context as twc_prompt
from mnemo.steps import extract, related
from mnemo.steps.answer_guards import check_ids, check_rewrites, check_share
from mnemo.steps.related import related_to

TASK = "extract_reconcile"


async def run(
    deps: Deps, group: GroupConfig, step: TransformWithContextStep, batch: Batch
) -> list[Candidate]:
    """The candidates of the batch's deferred extract step: the memories to create and the
    rewrites and deletes of the close memories, from one call when they fit."""
    extract_step = group.step(batch.deferred_extract or "")
    assert isinstance(extract_step, ExtractStep)
    raw, batch.inputs, batch.deferred_extract = batch.inputs[0], [], None
    built = await extract.llm_context(deps, group, extract_step, batch, raw)
    if built is None:
        return []
    context, times = built
    combined = await combined_context(deps, group, step, batch, context)
    if combined is None:
        answer = await deps.llm.complete(extract_prompt.PROMPT, context)
        return extract.candidates(group, batch, answer.memories, context, times)
    both = await deps.llm.complete(combined_prompt.PROMPT, combined[0])
    created = extract.candidates(group, batch, both.memories, context, times)
    return apply(deps, batch, both, combined[1], created, times)


async def combined_context(
    deps: Deps,
    group: GroupConfig,
    step: TransformWithContextStep,
    batch: Batch,
    context: extract_prompt.Context,
) -> tuple[combined_prompt.Context, dict[str, Memory]] | None:
    """The combined call's context and the memories it shows: the input's nearest memories
    of the scope (`context_limit`), the farthest left out until the prompt fits; None to
    extract alone (the scope has none, or not even the nearest fits).

    A scope with at most `context_limit` memories shows them all, newest first, without
    embedding the input: they are its nearest whatever it says. The input is embedded only
    to rank a larger scope, or to choose what to leave out when they do not all fit."""
    whole = await related.whole_scope(deps, group, step, batch)
    if whole is not None:
        batch.reconciled_whole_scope = True  # shown in full below, or nothing to show
        if not whole:
            return None
        combined = _combined(context, whole, step)
        if combined_prompt.size(combined) <= deps.settings.extract_reconcile_max_chars:
            return combined, {m.id: m for m in whole}
        batch.reconciled_whole_scope = False
    text = "\n".join(u.text for u in context.units)
    vectors = await deps.embedder.embed([text])
    found = await related_to(deps, group, step, batch, vectors)
    batch.reconciled_whole_scope = not found  # an empty scope: nothing to reconcile with
    nearest = [m for m, _ in sorted(found.values(), key=lambda mc: mc[1], reverse=True)]
    while nearest:
        combined = _combined(context, nearest, step)
        if combined_prompt.size(combined) <= deps.settings.extract_reconcile_max_chars:
            # Fewer than the limit found: the search returned the scope's every memory.
            batch.reconciled_whole_scope = len(nearest) == len(found) < step.context_limit
            return combined, {m.id: m for m in nearest}
        nearest.pop()  # transform_with_context asks about it, if it is close
    return None


def _combined(
    context: extract_prompt.Context, shown: list[Memory], step: TransformWithContextStep
) -> combined_prompt.Context:
    return combined_prompt.Context(
        extract=context,
        existing=[
            twc_prompt.ExistingMemory(
                id=m.id, topic=m.topic, content=m.content, event_time=m.event_time_end
            )
            for m in shown
        ],
        reconcile_instructions=step.instructions,
    )


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
        if (
            memory.id in decided
            or (write := related.revision(memory, verdict, batch, news)) is None
        ):
            continue
        decided.add(memory.id)
        out.append(write)
    batch.reconciled_with = [*batch.reconciled_with, *existing]
    return out
