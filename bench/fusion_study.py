"""Fusion variants scored offline on the vector and bm25 lists of mnemo's store.

`python -m bench.retrieval --fusion-study` fetches, per question, both lists (40 deep, as
hybrid mode does; `--study-depth`) from the store's vector and keyword search (raw BM25) and
hands them here. Each variant fuses the same two lists, so the product's own `fuse` (first
row) reproduces hybrid mode and the others are comparable with it; `z55`..`z70` are the
same fusion with more weight on the vector list (MNEMO_HYBRID_ALPHA). Bench only: the product
ships one fusion (mnemo.store.search.fuse). `rsf75-squashed` is the former default.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from types import SimpleNamespace

from bench.retrieval import KS, Ranked, Results
from bench.retrieval_data import Dataset
from mnemo.store.search import fuse

Fusion = Callable[[Ranked, Ranked], Ranked]


def z_fusion(alpha: float) -> Fusion:
    """The product's fusion (mnemo.store.search.fuse) with `alpha` on the vector list."""

    def rows(pairs: Ranked) -> list[tuple[SimpleNamespace, float]]:
        return [(SimpleNamespace(id=i), s) for i, s in pairs]

    def fused(vector: Ranked, keyword: Ranked) -> Ranked:
        return [(row.id, s) for row, s in fuse(rows(vector), rows(keyword), alpha, max(KS))]

    return fused


_product = z_fusion(0.5)


def _sorted(scores: dict[str, float]) -> Ranked:
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def rsf(alpha: float, squashed: bool = False) -> Fusion:
    """Relative score fusion: min-max each list, alpha on the vector list (on BM25 squashed
    to s / (1 + s) with `squashed`, as mnemo did before z-score fusion)."""

    def fused(vector: Ranked, keyword: Ranked) -> Ranked:
        if squashed:
            keyword = [(i, s / (1 + s)) for i, s in keyword]
        out: dict[str, float] = {}
        for pairs, weight in ((vector, alpha), (keyword, 1 - alpha)):
            if not pairs:
                continue
            low, high = min(s for _, s in pairs), max(s for _, s in pairs)
            for i, s in pairs:
                out[i] = out.get(i, 0.0) + weight * ((s - low) / (high - low) if high > low else 1)
        return _sorted(out)

    return fused


def rrf(k: int = 60) -> Fusion:
    def fused(vector: Ranked, keyword: Ranked) -> Ranked:
        out: dict[str, float] = {}
        for pairs in (vector, keyword):
            for rank, (i, _) in enumerate(pairs):
                out[i] = out.get(i, 0.0) + 1 / (k + rank + 1)
        return _sorted(out)

    return fused


def dbsf(vector: Ranked, keyword: Ranked) -> Ranked:
    """Distribution-based score fusion: each list scaled by mean +- 3 standard deviations."""
    out: dict[str, float] = {}
    for pairs in (vector, keyword):
        if len(pairs) < 2:
            continue
        scores = [s for _, s in pairs]
        mean, sd = statistics.fmean(scores), statistics.pstdev(scores) or 1.0
        for i, s in pairs:
            out[i] = out.get(i, 0.0) + (s - (mean - 3 * sd)) / (6 * sd)
    return _sorted(out)


def truncated(depth: int) -> Fusion:
    """The product's fusion on the lists cut to `depth` (z over fewer candidates)."""
    return lambda vector, keyword: _product(vector[:depth], keyword[:depth])


def tail_z(start: int = 10) -> Fusion:
    """Each list standardised against its own tail (ranks `start`..end) rather than all of
    it: a score-distribution model where the tail stands for the non-relevant memories, so
    a list whose top stands far above its tail weighs more for that query."""

    def standardised(pairs: Ranked) -> dict[str, float]:
        tail = [s for _, s in pairs[start:]] or [s for _, s in pairs]
        mean, sd = statistics.fmean(tail), statistics.pstdev(tail) or 1.0
        return {i: (s - mean) / sd for i, s in pairs}

    def fused(vector: Ranked, keyword: Ranked) -> Ranked:
        lists = [standardised(p) for p in (vector, keyword) if p]
        ids = {i for z in lists for i in z}
        return _sorted({i: sum(z.get(i, min(z.values())) for z in lists) for i in ids})

    return fused


VARIANTS: dict[str, Fusion] = {
    "product": _product,
    "product@10": truncated(10),
    "product@20": truncated(20),
    "z55": z_fusion(0.55),
    "z60": z_fusion(0.6),
    "z65": z_fusion(0.65),
    "z70": z_fusion(0.7),
    "tail-z": tail_z(),
    "rsf75-squashed": rsf(0.75, squashed=True),
    "rsf25": rsf(0.25),
    "rsf50": rsf(0.5),
    "rsf75": rsf(0.75),
    "rrf1": rrf(1),
    "rrf60": rrf(60),
    "dbsf": dbsf,
}


def study(data: Dataset, lists: list[dict[str, Ranked]]) -> Results:
    """R_any@k of every variant (plus the two lists alone) over the same questions."""
    results = Results(f"{data.name} fusion study")
    for question, pair in zip(data.questions, lists, strict=True):
        vector, keyword = pair["vector"], pair["bm25"]
        results.record("vector", question.category, question.evidence, vector)
        results.record("bm25", question.category, question.evidence, keyword)
        for name, fusion in VARIANTS.items():
            results.record(name, question.category, question.evidence, fusion(vector, keyword))
    return results
