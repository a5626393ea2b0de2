"""Offline heuristics for the `extract` prompt: user sentences routed to topics by similarity.

Each kept sentence of the user becomes one memory of the most similar non-bounded topic.
A bounded topic receives one merged memory: its current content plus the new sentences that
are similar enough to its brief (or every sentence, for summary/history-like topics).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.contracts.embedder import Embedder
from mnemo.llm.offline.claims import changed_fact, parse_claim
from mnemo.llm.offline.offload import Offload
from mnemo.llm.offline.text import sourced_facts, split_sentences
from mnemo.llm.offline.vectors import Vectors, best_columns, dedupe
from mnemo.prompts.extract import Context, ExtractedMemory, Response, TopicBrief

MAX_BOUNDED_CHARS = 1500
_SUMMARY_LIKE = re.compile(r"summary|history", re.IGNORECASE)
_WANTS_REQUESTS = re.compile(r"\bgoals?\b|\basked\b|\brequests?\b", re.IGNORECASE)


@dataclass(frozen=True)
class ExtractTuning:
    dedupe_threshold: float
    bounded_threshold: float
    similar_threshold: float = 0.78


def brief_text(topic: TopicBrief) -> str:
    return f"{topic.name}: {topic.description}"


def is_summary_like(topic: TopicBrief) -> bool:
    """A running summary or history takes every sentence, not only the similar ones."""
    return bool(_SUMMARY_LIKE.search(topic.name) or _SUMMARY_LIKE.search(topic.description))


async def extract(
    ctx: Context, embedder: Embedder, tuning: ExtractTuning, offload: Offload
) -> Response:
    """Heuristic extraction; see the module docstring. CPU work runs in `offload`."""
    keep_requests = any(_WANTS_REQUESTS.search(brief_text(t)) for t in ctx.topics)
    written_on = [u.at.date() for u in ctx.units]
    unit_texts = [u.text for u in ctx.units]
    sourced = await offload(sourced_facts, unit_texts, ctx.input_type, keep_requests, written_on)
    if not sourced or not ctx.topics:
        return Response(memories=[])
    sentences = [s for s, _ in sourced]
    source: dict[str, list[int]] = {}
    for sentence, index in sourced:
        source.setdefault(sentence, []).append(index)
    current = {t.name: split_sentences(t.current) for t in ctx.topics if t.is_bounded}
    texts = [brief_text(t) for t in ctx.topics] + sentences
    vectors = await Vectors.of(embedder, texts + [s for c in current.values() for s in c])
    return await offload(_decide, ctx, sentences, source, current, vectors, tuning)


def _decide(
    ctx: Context,
    sentences: list[str],
    source: dict[str, list[int]],
    current: dict[str, list[str]],
    vectors: Vectors,
    tuning: ExtractTuning,
) -> Response:
    free = [t for t in ctx.topics if not t.is_bounded]
    memories = [
        m.model_copy(update={"evidence": source[m.content]})
        for m in _free_memories(vectors, sentences, free, tuning)
    ]
    chosen = _bounded_choices(vectors, sentences, ctx, tuning)
    for topic in (t for t in ctx.topics if t.is_bounded):
        merged = _merge_bounded(vectors, current[topic.name], chosen[topic.name], tuning)
        if merged:
            evidence = sorted({i for s in chosen[topic.name] for i in source[s]})
            memories.append(ExtractedMemory(topic=topic.name, content=merged, evidence=evidence))
    return Response(memories=memories)


def _free_memories(
    vectors: Vectors, sentences: list[str], free: list[TopicBrief], tuning: ExtractTuning
) -> list[ExtractedMemory]:
    """Each unique sentence in its most similar topic (ties go to the earlier topic)."""
    if not free:
        return []
    # Consolidation's rule topic learns from episodes; a user's sentence goes elsewhere.
    free = [t for t in free if not t.learned] or free
    # A lasting attribute ("User works as a nurse.") is no episode (something that happened).
    lasting = [t for t in free if not t.episodic] or free
    unique = dedupe(vectors, sentences, [], tuning.dedupe_threshold)
    out = []
    for topics, group in ((lasting, [s for s in unique if _is_attribute(s)]),
                          (free, [s for s in unique if not _is_attribute(s)])):  # fmt: skip
        if group:
            best = best_columns(vectors, group, [brief_text(t) for t in topics])
            out += [
                ExtractedMemory(topic=topics[b].name, content=s)
                for s, b in zip(group, best, strict=True)
            ]
    order = {s: i for i, s in enumerate(unique)}
    return sorted(out, key=lambda m: order[m.content])


def _is_attribute(sentence: str) -> bool:
    """A present-tense statement of the user's own attribute (`claims.parse_claim`)."""
    return parse_claim(sentence) is not None


def _bounded_choices(
    vectors: Vectors, sentences: list[str], ctx: Context, tuning: ExtractTuning
) -> dict[str, list[str]]:
    """The new sentences each bounded topic takes: all of them for a summary-like topic,
    else those similar enough to its brief; when every topic is bounded, a sentence also
    lands in its most similar topic."""
    bounded = [(j, t) for j, t in enumerate(ctx.topics) if t.is_bounded]
    if not bounded:
        return {}
    briefs = [brief_text(t) for t in ctx.topics]
    scores = vectors.similarities(sentences, briefs)
    only_bounded = all(t.is_bounded for t in ctx.topics)
    best = scores.argmax(axis=1) if only_bounded else None
    chosen: dict[str, list[str]] = {}
    for j, topic in bounded:
        takes = scores[:, j] >= tuning.bounded_threshold
        if is_summary_like(topic):
            takes[:] = True
        elif best is not None:
            takes |= best == j
        chosen[topic.name] = [s for s, take in zip(sentences, takes, strict=True) if take]
    return chosen


def _merge_bounded(
    vectors: Vectors, current: list[str], chosen: list[str], tuning: ExtractTuning
) -> str | None:
    """Current sentences plus the new ones, oldest dropped past MAX_BOUNDED_CHARS; a current
    sentence a new one supersedes is dropped.

    None when nothing is new, so an unchanged bounded memory is not rewritten.
    """
    new = dedupe(vectors, chosen, current, tuning.dedupe_threshold)
    if not new:
        return None
    # A profile states each attribute once: a sentence a new one supersedes leaves it.
    kept = [
        c
        for c in current
        if not any(
            changed_fact(c, n, vectors.similarity(c, n), tuning.similar_threshold) for n in new
        )
    ]
    parts = [*kept, *new]
    while len(" ".join(parts)) > MAX_BOUNDED_CHARS and len(parts) > 1:
        parts.pop(0)
    return " ".join(parts)
