"""Offline heuristics for `transform_with_context`: duplicates and same-attribute changes.

For each new memory, in order, against the existing memories about the same subject (the
user for "User ..." sentences whatever their topic, else the same topic):
1. Duplicate (same normalized text, similarity >= dedupe threshold, or a "still" sentence
   about what an existing memory states: `claims.restatement_of`) of an existing memory or
   of an earlier new one: delete the new one.
2. It changes a fact an existing memory states (see `claims`): rewrite that existing memory
   as the new statement (its old wording stays in the memory's history) and delete the new
   one. Each existing memory is rewritten at
   most once per call; the most similar one wins.
3. Otherwise keep the new memory. Existing memories that were not rewritten are kept.
The instructions text is not interpreted.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from mnemo.contracts.embedder import Embedder
from mnemo.llm.offline.claims import change_keys, changed_fact, ended_value, restatement_of
from mnemo.llm.offline.offload import Offload
from mnemo.llm.offline.text import normalized
from mnemo.llm.offline.vectors import Vectors
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


async def reconcile(
    ctx: Context, embedder: Embedder, tuning: ReconcileTuning, offload: Offload
) -> Response:
    """Heuristic reconciliation; see the module docstring. CPU work runs in `offload`."""
    texts = [m.content for m in ctx.existing] + [m.content for m in ctx.new]
    vectors = await Vectors.of(embedder, texts)
    return await offload(_reconcile, ctx, vectors, tuning)


def _reconcile(ctx: Context, vectors: Vectors, tuning: ReconcileTuning) -> Response:
    state = _State(ctx)
    columns = [m.content for m in ctx.existing] + [m.content for m in ctx.new]
    new_decisions = []
    for start, block in vectors.blocks([m.content for m in ctx.new], columns):
        for offset, row in enumerate(block):
            new_decisions.append(state.decide(start + offset, row, tuning))
    existing_decisions = [
        ExistingDecision(id=m.id, action="rewrite", content=state.rewrites[m.id])
        if m.id in state.rewrites
        else ExistingDecision(id=m.id, action="keep")
        for m in ctx.existing
    ]
    return Response(existing=existing_decisions, new=new_decisions)


def _subject(memory: ExistingMemory | NewMemory) -> str:
    """Whom a statement is about: "User ..." sentences are about the add's user whichever
    topic holds them (one reconcile call is one user's scope), anything else about its
    topic."""
    about_user = memory.content.lower().startswith(("user", "we "))
    return "" if about_user else f"topic:{memory.topic}"


class _State:
    """What the decisions so far left: the kept new memories and the rewrites, by subject
    (`_subject`).

    Similarity rows passed to `decide` have one column per existing memory, then one per
    new memory, in the context's order.
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.existing_count = len(ctx.existing)
        self.rewrites: dict[str, str] = {}
        self._existing_of: dict[str, np.ndarray] = {}  # subject -> mask over existing
        self._taken: dict[str, set[str]] = defaultdict(set)  # subject -> normalized texts
        self._by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, memory in enumerate(ctx.existing):
            subject = _subject(memory)
            mask = self._existing_of.setdefault(subject, np.zeros(len(ctx.existing), bool))
            mask[i] = True
            self._taken[subject].add(normalized(memory.content))
            for key in change_keys(memory.content, as_old=True):
                self._by_key[(subject, key)].append(i)
        self._kept_of: dict[str, np.ndarray] = {}  # subject -> mask over new memories
        self._ended: set[str] = set()  # rewritten by a statement that only ends a value

    def decide(self, i: int, row: np.ndarray, tuning: ReconcileTuning) -> NewDecision:
        """The decision for new memory `i`; a rewrite of an existing memory is recorded."""
        new = self.ctx.new[i]
        if self._duplicate(new, row, tuning.dedupe_threshold):
            return NewDecision(index=new.index, action="delete")
        changes = []
        for j in self._candidates(new):
            memory = self.ctx.existing[j]
            if memory.id in self.rewrites and memory.id not in self._ended:
                continue
            similarity = float(row[j])
            rewritten = changed_fact(
                memory.content, new.content, similarity, tuning.similar_threshold
            )
            if rewritten:
                changes.append((similarity, memory.id, rewritten))
        if not changes:
            self._keep(i, new)
            return NewDecision(index=new.index, action="keep")
        # Most similar first; ties by the order given, so the result is deterministic.
        _, memory_id, rewritten = max(changes, key=lambda c: c[0])
        # "User gave up on piano." then "User is learning guitar now." in one add: the
        # statement of the new value wins; the old one stays in the memory's history.
        self._ended.discard(memory_id)
        if ended_value(rewritten) is not None and memory_id not in self.rewrites:
            self._ended.add(memory_id)
        self.rewrites[memory_id] = rewritten
        return NewDecision(index=new.index, action="delete")

    def _duplicate(self, new: NewMemory, row: np.ndarray, threshold: float) -> bool:
        """The same text as, or similar enough to, an existing memory of its topic or a new
        one kept earlier."""
        subject = _subject(new)
        if normalized(new.content) in self._taken[subject]:
            return True
        # "Home is still Oslo" has no "User" to go by: any memory of the call may hold it.
        if any(restatement_of(new.content, m.content) for m in self.ctx.existing):
            return True
        near = row >= threshold
        existing = self._existing_of.get(subject)
        if existing is not None and (near[: self.existing_count] & existing).any():
            return True
        kept = self._kept_of.get(subject)
        return kept is not None and bool((near[self.existing_count :] & kept).any())

    def _candidates(self, new: NewMemory) -> list[int]:
        """Existing memories of the topic that state something `new` also states, in order."""
        subject = _subject(new)
        found = {j for key in change_keys(new.content) for j in self._by_key[(subject, key)]}
        return sorted(found)

    def _keep(self, i: int, new: NewMemory) -> None:
        mask = self._kept_of.setdefault(_subject(new), np.zeros(len(self.ctx.new), bool))
        mask[i] = True
        self._taken[_subject(new)].add(normalized(new.content))
