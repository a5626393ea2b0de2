"""Offline heuristics for `consolidate`: a digest of the cluster, not a learned lesson.

The rule is built from the cluster's episodes (a rule's earlier sources and the new ones):
its most central episode (highest mean similarity to the others) leads, followed by the other
episodes, most central first, near-duplicates (similarity >= the dedupe threshold) left out,
within MAX_CHARS. It says how many episodes it rests on: "From 3 similar episodes: <lead>.
Also: <episode>; <episode>." Every episode given is used. A language model writes an actual
rule ("prefer X when Y; Z caused both before"); this only gathers the evidence in one memory.
"""

from __future__ import annotations

import numpy as np

from mnemo.contracts.embedder import Embedder
from mnemo.llm.offline.vectors import Vectors, is_duplicate
from mnemo.prompts.consolidate import Context, Response

MAX_CHARS = 600


async def consolidate(ctx: Context, embedder: Embedder, dedupe_threshold: float) -> Response:
    texts = list(dict.fromkeys(e.content.strip() for e in [*ctx.earlier, *ctx.episodes]))
    texts = [t for t in texts if t]
    if not texts:
        return Response(rule=None, used=[])
    vectors = await Vectors.of(embedder, texts)
    centrality = [
        float(np.mean([vectors.similarity(t, o) for o in texts if o != t]))
        if len(texts) > 1
        else 1.0
        for t in texts
    ]
    ordered = [t for _, t in sorted(zip(centrality, texts, strict=True), key=lambda p: -p[0])]
    clauses = [_clause(ordered[0])]
    kept = [ordered[0]]
    for text in ordered[1:]:
        if any(is_duplicate(vectors, text, other, dedupe_threshold) for other in kept):
            continue
        if len(_render(len(texts), [*clauses, _clause(text)])) > MAX_CHARS:
            break
        clauses.append(_clause(text))
        kept.append(text)
    return Response(rule=_render(len(texts), clauses), used=None)


def _render(count: int, clauses: list[str]) -> str:
    head = f"From {count} similar episodes: {clauses[0]}."
    return head if len(clauses) == 1 else f"{head} Also: {'; '.join(clauses[1:])}."


def _clause(text: str) -> str:
    return text.strip().rstrip(".!?;")
