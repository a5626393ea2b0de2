"""Signals the ranked lists do not carry, added to a search's candidates before the cut.

Every retrieval mode (vector, bm25, hybrid) asks the store for a deeper pool than the caller's
limit (`POOL_DEPTH`), then `rerank` moves each candidate by its signals and keeps the best
`limit`. The move is measured in standard deviations of the pool's own scores (each mode's
score first mapped back to its unbounded form: the fused z for hybrid, raw BM25 for bm25,
the similarity for vector), so one weight means the same in every mode and on every query:

- time: the query names a window (`core.query_understanding`) and the memory's event-time
  range overlaps it;
- names: a name the query mentions is one of the memory's property values, or stands among
  the first words of its content (a speaker label "Caroline: ..." or the sentence's subject);
- context: a memory's neighbours (the memories written just before and after it by the
  same run, in event-time order) scored better than it for this query: it closes that share
  of the gap to the better neighbour's z. A short reply ("Yes, last week!") is found through
  the question before it. Only the gap moves it, not the neighbour's whole score: a memory
  that already ranks above its neighbours keeps its place, so a run whose turns all match
  does not crowd the cut with its adjacent turns (adding the whole neighbour's score did, and
  lost BEAM-128K questions; docs/benchmarks.md).

Each weight is a setting (`Settings.recall_*`); 0 turns its signal off, and with all three
at 0 the pool is the limit and ranking is exactly the lists'. Bench: `python -m
bench.retrieval` (docs/benchmarks.md, Retrieval quality).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mnemo.core.query_understanding import QueryIntent
from mnemo.domain.memory import Memory
from mnemo.domain.search import RetrievalType
from mnemo.settings import Settings

# Candidates a search ranks before keeping its limit (hybrid fuses this many per list).
POOL_DEPTH = 40
# The first words of a memory where its subject or speaker stands.
_HEAD = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?((?:\S+\s+){0,2}\S+)")
_WORD = re.compile(r"[a-z][\w'\u2019-]*")
_EDGE = 1e-9


@dataclass(frozen=True)
class RecallWeights:
    """Each signal's weight in standard deviations of the pool's scores (0: off)."""

    time: float = 0.0
    names: float = 0.0
    context: float = 0.0

    @property
    def active(self) -> bool:
        return self.time > 0 or self.names > 0 or self.context > 0


def recall_weights(settings: Settings) -> RecallWeights:
    return RecallWeights(
        time=settings.recall_time_weight,
        names=settings.recall_names_weight,
        context=settings.recall_context_weight,
    )


def _unbounded(kind: RetrievalType, score: float) -> float:
    """A mode's [0, 1] score back in the unbounded form its list was ranked by."""
    score = min(max(score, _EDGE), 1.0 - _EDGE)
    if kind == "hybrid":
        return math.log(score / (1.0 - score))  # the fused z, before the logistic
    if kind == "bm25":
        return score / (1.0 - score)  # raw BM25, before s / (1 + s)
    return score


def _bounded(kind: RetrievalType, value: float) -> float:
    if kind == "hybrid":
        return 1.0 / (1.0 + math.exp(-value))
    if kind == "bm25":
        value = max(value, 0.0)
        return value / (1.0 + value)
    return min(max(value, 0.0), 1.0)


def names_match(names: frozenset[str], memory: Memory) -> bool:
    """A query name among the memory's property values or its content's first words."""
    values = {v.lower() for v in (memory.properties or {}).values() if isinstance(v, str)}
    head = _HEAD.match(memory.content)
    words = set(_WORD.findall(head[1].lower())) if head else set()
    return bool(names & (values | words))


def boosts(
    found: Sequence[Memory],
    z: Mapping[str, float],
    intent: QueryIntent,
    neighbours: Mapping[str, Sequence[str]],
    weights: RecallWeights,
) -> dict[str, float]:
    """Each candidate's move, in standard deviations (see the module docstring)."""
    moved: dict[str, float] = {}
    for memory in found:
        move = 0.0
        if weights.time and intent.windows:
            span = (memory.event_time, memory.event_time_end)
            if any(w.overlaps(*span) for w in intent.windows):
                move += weights.time
        if weights.names and intent.names and names_match(intent.names, memory):
            move += weights.names
        if weights.context:
            near = [z[n] for n in neighbours.get(memory.id, ()) if n in z]
            if near:
                move += weights.context * max(0.0, max(near) - z[memory.id])
        moved[memory.id] = move
    return moved


def pool_z(
    found: Sequence[Memory], kind: RetrievalType
) -> tuple[dict[str, float], float, float] | None:
    """Each candidate's z-score in the pool (its score in the mode's unbounded form), with
    the pool's mean and spread; None when every candidate scores alike."""
    values = {m.id: _unbounded(kind, m.score or 0.0) for m in found}
    mean = math.fsum(values.values()) / len(values)
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values.values()) / len(values))
    if spread <= 0:
        return None
    return {i: (v - mean) / spread for i, v in values.items()}, mean, spread


def rerank(
    found: Sequence[Memory],
    kind: RetrievalType,
    intent: QueryIntent,
    neighbours: Mapping[str, Sequence[str]],
    weights: RecallWeights,
    limit: int,
) -> list[Memory]:
    """`found` (one mode's pool, best first) moved by its signals, best `limit` first, each
    with its moved score in the mode's own [0, 1] form."""
    if not found or not weights.active:
        return list(found[:limit])
    standard = pool_z(found, kind)
    if standard is None:
        return list(found[:limit])
    z, mean, spread = standard
    moved = boosts(found, z, intent, neighbours, weights)
    position = {m.id: n for n, m in enumerate(found)}
    # Ties keep the lists' order.
    order = sorted(found, key=lambda m: (-(z[m.id] + moved[m.id]), position[m.id]))[:limit]
    return [
        m.model_copy(
            update={"score": round(_bounded(kind, mean + spread * (z[m.id] + moved[m.id])), 6)}
        )
        for m in order
    ]
