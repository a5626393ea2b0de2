"""Offline heuristics for `transform_with_context`: duplicates and same-attribute changes.

For each new memory, in order, against the existing memories of the same topic:
1. Duplicate (same normalized text, or similarity >= dedupe threshold) of an existing memory
   or of an earlier new one: delete the new one.
2. It changes a fact an existing memory states (see `claims`): rewrite that existing memory as
   "User used to ..., now ..." and delete the new one. Each existing memory is rewritten at
   most once per call; the most similar one wins.
3. Otherwise keep the new memory. Existing memories that were not rewritten are kept.
The instructions text is not interpreted.
"""

from __future__ import annotations

from dataclasses import dataclass

from mnemo.embeddings.base import Embedder
from mnemo.llm.offline.claims import changed_fact
from mnemo.llm.offline.vectors import Vectors, is_duplicate
from mnemo.prompts.transform_with_context import (
    Context,
    ExistingDecision,
    ExistingMemory,
    NewDecision,
    NewMemory,
    Response,
)


@dataclass(frozen=True)
class ReconcileTuning:
    dedupe_threshold: float
    similar_threshold: float


async def reconcile(ctx: Context, embedder: Embedder, tuning: ReconcileTuning) -> Response:
    """Heuristic reconciliation; see the module docstring."""
    texts = [m.content for m in ctx.existing] + [m.content for m in ctx.new]
    vectors = await Vectors.of(embedder, texts)
    rewrites: dict[str, str] = {}
    kept: list[NewMemory] = []
    new_decisions = []
    for new in ctx.new:
        decision = _decide(vectors, new, ctx.existing, kept, rewrites, tuning)
        if decision.action == "keep":
            kept.append(new)
        new_decisions.append(decision)
    existing_decisions = [
        ExistingDecision(id=m.id, action="rewrite", content=rewrites[m.id])
        if m.id in rewrites
        else ExistingDecision(id=m.id, action="keep")
        for m in ctx.existing
    ]
    return Response(existing=existing_decisions, new=new_decisions)


def _decide(
    vectors: Vectors,
    new: NewMemory,
    existing: list[ExistingMemory],
    kept: list[NewMemory],
    rewrites: dict[str, str],
    tuning: ReconcileTuning,
) -> NewDecision:
    """One new memory's decision; records a rewrite of an existing memory in `rewrites`."""
    same_topic = [m for m in existing if m.topic == new.topic]
    earlier = [m.content for m in kept if m.topic == new.topic]
    for other in [*(m.content for m in same_topic), *earlier]:
        if is_duplicate(vectors, new.content, other, tuning.dedupe_threshold):
            return NewDecision(index=new.index, action="delete")
    changes = []
    for memory in same_topic:
        if memory.id in rewrites:
            continue
        similarity = vectors.similarity(memory.content, new.content)
        rewritten = changed_fact(memory.content, new.content, similarity, tuning.similar_threshold)
        if rewritten:
            changes.append((similarity, memory.id, rewritten))
    if not changes:
        return NewDecision(index=new.index, action="keep")
    # Most similar first; ties by the order given, so the result is deterministic.
    _, memory_id, rewritten = max(changes, key=lambda c: c[0])
    rewrites[memory_id] = rewritten
    return NewDecision(index=new.index, action="delete")
