"""Transform with context: reconcile new candidates with related committed memories.

With a `reconsolidation` section, the gate (`steps.reconsolidate`) first decides on the
memories the add recalled. Then, for the new candidates the gate did not account for, one
structured LLM call decides for each related and each new memory: keep, rewrite (content)
or delete. Rewrites of committed memories keep their history at commit.

The call is made only when a related memory is close enough: its cosine similarity to a new
candidate must reach the step's `min_similarity` (default: the `reconcile_min_similarity`
setting), or the text rules of `llm.offline.claims` say a candidate changes what a related
memory states (a move, a new job, "sold X and bought Y"); otherwise the candidates are kept
as they are, without an LLM call.
"""

from __future__ import annotations

from mnemo import metrics
from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.event_time import Span
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, Memory
from mnemo.domain.pipeline import TransformWithContextStep
from mnemo.llm.offline.claims import changed_fact
from mnemo.llm.offline.text import normalized
from mnemo.prompts import transform_with_context as twc_prompt
from mnemo.steps import extract_reconcile, related
from mnemo.steps.answer_guards import check_ids, check_rewrites, check_share
from mnemo.steps.reconsolidate import GateOutcome, gate


async def transform_with_context(
    deps: Deps, group: GroupConfig, step: TransformWithContextStep, batch: Batch
) -> list[Candidate]:
    # Bounded topics were merged at extract; internal fragments are never reconciled.
    if batch.deferred_extract is not None:  # extract and reconcile, in the scope's order
        batch.candidates = [
            *batch.candidates,
            *await extract_reconcile.run(deps, group, step, batch),
        ]
        if batch.reconciled_whole_scope:  # the call saw every memory it could touch
            return batch.candidates
    passthrough = [c for c in batch.candidates if _skips(group, c)]
    fresh = [c for c in batch.candidates if not _skips(group, c) and c.op == "create"]
    if not fresh:
        return batch.candidates
    others = [c for c in batch.candidates if c not in passthrough and c not in fresh]
    decided = await gate(deps, group, batch, fresh)
    batch.gate = [*batch.gate, *decided.decisions]
    remaining = [c for i, c in enumerate(fresh) if i not in decided.covered]
    settled = passthrough + others + decided.updates
    if not remaining:
        return settled
    close = await _related(deps, group, step, batch, remaining)
    if batch.reconciled_with:  # the combined call judged these already
        close = {k: v for k, v in close.items() if k not in batch.reconciled_with}
    existing = {k: m for k, (m, _) in close.items() if k not in decided.decided}
    floor = step.min_similarity
    if floor is None:
        floor = deps.settings.reconcile_min_similarity
    below = not existing or max(close[k][1] for k in existing) < floor
    if below and not _states_a_change(remaining, existing):
        if existing:
            metrics.RECONCILE_SKIPPED.inc()
        return settled + remaining
    read_only = _read_only(group, decided, existing)
    return settled + await _reconcile(deps, step, batch, remaining, existing, read_only)


def _read_only(group: GroupConfig, decided: GateOutcome, existing: dict[str, Memory]) -> set[str]:
    """Memories reconcile may show but not write: those the gate refused or capped, and
    with `only_recalled`, every memory the add did not recall."""
    frozen = set(decided.frozen)
    if group.reconsolidation is not None and group.reconsolidation.only_recalled:
        frozen |= {k for k in existing if k not in decided.recalled}
    return frozen


async def _reconcile(
    deps: Deps,
    step: TransformWithContextStep,
    batch: Batch,
    fresh: list[Candidate],
    existing: dict[str, Memory],
    read_only: set[str],
) -> list[Candidate]:
    context = twc_prompt.Context(
        instructions=step.instructions,
        existing=[
            twc_prompt.ExistingMemory(
                id=m.id,
                topic=m.topic,
                content=m.content,
                event_time=m.event_time_end,
                read_only=m.id in read_only,
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
    _guard(answer, existing, deps.settings.destructive_max_share)
    said = {(m.topic, normalized(m.content)) for m in existing.values()}
    out = []
    new_decisions = {d.index: d for d in answer.new}
    for i, candidate in enumerate(fresh):
        decision = new_decisions.get(i)
        if decision is not None and decision.action == "rewrite" and decision.content:
            candidate = candidate.model_copy(update={"content": decision.content.strip()})
        elif decision is not None and decision.action != "keep":
            continue
        if (candidate.topic, normalized(candidate.content)) not in said:
            out.append(candidate)  # a restatement kept by the model writes nothing
    for verdict in answer.existing:
        memory = existing[verdict.id]
        if memory.id not in read_only and (write := related.revision(memory, verdict, batch, news)):
            out.append(write)
    return out


def _states_a_change(fresh: list[Candidate], existing: dict[str, Memory]) -> bool:
    """A candidate changes what a related memory states by the text rules alone
    (`claims.changed_fact`: "We finally moved to Oslo." / "User lives in Riga."), however
    unlike their vectors are: reconcile is asked even below the similarity floor."""
    return any(
        changed_fact(m.content, c.content, 0.0, 2.0) is not None
        for c in fresh
        for m in existing.values()
    )


def _guard(answer: twc_prompt.Response, existing: dict[str, Memory], max_share: float) -> None:
    """Refuse a destructive answer before anything of it is used (`core.answer_guards`)."""
    check_ids("reconcile", (v.id for v in answer.existing), existing)
    rewrites = [v.content for v in answer.existing if v.action == "rewrite"]
    rewrites += [d.content for d in answer.new if d.action == "rewrite"]
    check_rewrites("reconcile", rewrites)
    deleted = sum(1 for v in answer.existing if v.action == "delete")
    check_share("reconcile", deleted, len(existing), max_share)


def _skips(group: GroupConfig, candidate: Candidate) -> bool:
    topic = group.topic(candidate.topic)
    return topic.is_bounded or topic.internal


async def _related(
    deps: Deps,
    group: GroupConfig,
    step: TransformWithContextStep,
    batch: Batch,
    fresh: list[Candidate],
) -> dict[str, tuple[Memory, float]]:
    """Committed memories related to any new candidate, in the candidate's own scope, with
    their highest cosine similarity to one of them."""
    if not related.selectors(group, batch):
        return {}
    vectors = await deps.embedder.embed([c.content for c in fresh])
    return await related.related_to(deps, group, step, batch, vectors)
