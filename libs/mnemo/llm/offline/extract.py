"""Offline heuristics for the `extract` prompt: user sentences routed to topics by similarity.

Each kept sentence of the user becomes one memory of the most similar non-bounded topic.
A bounded topic receives one merged memory: its current content plus the new sentences that
are similar enough to its brief (or every sentence, for summary/history-like topics).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.embeddings.base import Embedder
from mnemo.llm.offline.text import sourced_facts, split_sentences
from mnemo.llm.offline.vectors import Vectors, dedupe
from mnemo.prompts.extract import Context, ExtractedMemory, Response, TopicBrief

MAX_BOUNDED_CHARS = 1500
_SUMMARY_LIKE = re.compile(r"summary|history", re.IGNORECASE)
_WANTS_REQUESTS = re.compile(r"\bgoals?\b|\basked\b|\brequests?\b", re.IGNORECASE)


@dataclass(frozen=True)
class ExtractTuning:
    dedupe_threshold: float
    bounded_threshold: float


def brief_text(topic: TopicBrief) -> str:
    return f"{topic.name}: {topic.description}"


def is_summary_like(topic: TopicBrief) -> bool:
    """A running summary or history takes every sentence, not only the similar ones."""
    return bool(_SUMMARY_LIKE.search(topic.name) or _SUMMARY_LIKE.search(topic.description))


async def extract(ctx: Context, embedder: Embedder, tuning: ExtractTuning) -> Response:
    """Heuristic extraction; see the module docstring."""
    keep_requests = any(_WANTS_REQUESTS.search(brief_text(t)) for t in ctx.topics)
    written_on = [u.at.date() for u in ctx.units]
    sourced = sourced_facts([u.text for u in ctx.units], ctx.input_type, keep_requests, written_on)
    if not sourced or not ctx.topics:
        return Response(memories=[])
    sentences = [s for s, _ in sourced]
    source: dict[str, list[int]] = {}
    for sentence, index in sourced:
        source.setdefault(sentence, []).append(index)
    current = {t.name: split_sentences(t.current) for t in ctx.topics if t.is_bounded}
    texts = [brief_text(t) for t in ctx.topics] + sentences
    vectors = await Vectors.of(embedder, texts + [s for c in current.values() for s in c])
    free = [t for t in ctx.topics if not t.is_bounded]
    memories = [
        m.model_copy(update={"evidence": source[m.content]})
        for m in _free_memories(vectors, sentences, free, tuning)
    ]
    for topic in (t for t in ctx.topics if t.is_bounded):
        chosen = [s for s in sentences if _belongs_to_bounded(vectors, s, topic, ctx, tuning)]
        merged = _merge_bounded(vectors, current[topic.name], chosen, tuning)
        if merged:
            evidence = sorted({i for s in chosen for i in source[s]})
            memories.append(ExtractedMemory(topic=topic.name, content=merged, evidence=evidence))
    return Response(memories=memories)


def _best_topic(vectors: Vectors, sentence: str, topics: list[TopicBrief]) -> TopicBrief:
    """The most similar topic; ties go to the earlier topic, so the choice is deterministic."""
    scores = [vectors.similarity(sentence, brief_text(t)) for t in topics]
    return topics[scores.index(max(scores))]


def _free_memories(
    vectors: Vectors, sentences: list[str], free: list[TopicBrief], tuning: ExtractTuning
) -> list[ExtractedMemory]:
    if not free:
        return []
    unique = dedupe(vectors, sentences, [], tuning.dedupe_threshold)
    return [ExtractedMemory(topic=_best_topic(vectors, s, free).name, content=s) for s in unique]


def _belongs_to_bounded(
    vectors: Vectors, sentence: str, topic: TopicBrief, ctx: Context, tuning: ExtractTuning
) -> bool:
    if is_summary_like(topic):
        return True
    if vectors.similarity(sentence, brief_text(topic)) >= tuning.bounded_threshold:
        return True
    if any(not t.is_bounded for t in ctx.topics):
        return False
    # Only bounded topics: every sentence still lands in its most similar one.
    return _best_topic(vectors, sentence, ctx.topics).name == topic.name


def _merge_bounded(
    vectors: Vectors, current: list[str], chosen: list[str], tuning: ExtractTuning
) -> str | None:
    """Current sentences plus the new ones, oldest dropped past MAX_BOUNDED_CHARS.

    None when nothing is new, so an unchanged bounded memory is not rewritten.
    """
    new = dedupe(vectors, chosen, current, tuning.dedupe_threshold)
    if not new:
        return None
    parts = [*current, *new]
    while len(" ".join(parts)) > MAX_BOUNDED_CHARS and len(parts) > 1:
        parts.pop(0)
    return " ".join(parts)
