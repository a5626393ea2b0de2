"""Offline heuristics for the reconsolidation gate (`reconsolidate`).

For each recalled memory, against each new memory of the add, in order:
- the same text, or similarity >= the dedupe threshold: `match`;
- the same attribute with a new value ("User prefers / works as / lives in ...", see
  `claims`): `contradict`, rewritten as the new memory;
- the new memory contains every content word of the recalled one and more, and they are
  at least `similar_threshold` alike: `extend`, rewritten as the new memory;
- otherwise `unrelated`.
The evidence is the user's input sentence that shares most words with the new memory,
copied verbatim. Corrections phrased any other way ("not grade 2, use grade 4") are not
recognised: they come out `unrelated`, and reconcile decides on the new memory as usual.
"""

from __future__ import annotations

from dataclasses import dataclass

from mnemo.contracts.embedder import Embedder
from mnemo.llm.offline.claims import changed_fact
from mnemo.llm.offline.text import normalized, split_sentences, user_texts
from mnemo.llm.offline.vectors import Vectors, is_duplicate
from mnemo.prompts.reconsolidate import Context, NewMemory, RecalledMemory, Response, Verdict

_STOPWORDS = frozenset("a an the of in on at to for with and or but is are user i my".split())


@dataclass(frozen=True)
class GateTuning:
    dedupe_threshold: float
    similar_threshold: float


async def gate(ctx: Context, embedder: Embedder, tuning: GateTuning) -> Response:
    texts = [m.content for m in ctx.recalled] + [n.content for n in ctx.new]
    vectors = await Vectors.of(embedder, texts)
    units = user_texts(ctx.input, "conversation")
    sentences = [s for _, unit in units for s in split_sentences(unit)]
    verdicts = []
    covered: set[int] = set()
    for memory in ctx.recalled:
        # A new memory accounts for one recalled memory at most: two rewritten to the same
        # new content would be a duplicate.
        verdict = _verdict(vectors, memory, [n for n in ctx.new if n.index not in covered],
                           sentences, tuning)  # fmt: skip
        covered.update(verdict.covers)
        verdicts.append(verdict)
    return Response(verdicts=verdicts)


def _verdict(
    vectors: Vectors,
    memory: RecalledMemory,
    new: list[NewMemory],
    sentences: list[str],
    tuning: GateTuning,
) -> Verdict:
    for candidate in new:
        similarity = vectors.similarity(memory.content, candidate.content)
        evidence = _evidence(candidate.content, sentences)
        if is_duplicate(vectors, memory.content, candidate.content, tuning.dedupe_threshold):
            return Verdict(
                id=memory.id, decision="match", evidence=evidence, covers=[candidate.index]
            )
        if changed_fact(memory.content, candidate.content, similarity, tuning.similar_threshold):
            return Verdict(
                id=memory.id, decision="contradict", evidence=evidence,
                content=candidate.content, covers=[candidate.index],
            )  # fmt: skip
        if similarity >= tuning.similar_threshold and _extends(memory.content, candidate.content):
            return Verdict(
                id=memory.id, decision="extend", evidence=evidence,
                content=candidate.content, covers=[candidate.index],
            )  # fmt: skip
    return Verdict(id=memory.id, decision="unrelated")


def _words(text: str) -> set[str]:
    return {w for w in normalized(text).split() if w not in _STOPWORDS}


def _extends(old: str, new: str) -> bool:
    before, after = _words(old), _words(new)
    return bool(before) and before < after


def _evidence(content: str, sentences: list[str]) -> str:
    """The input sentence sharing most words with `content` (the first on ties)."""
    if not sentences:
        return ""
    target = _words(content)
    return max(sentences, key=lambda s: len(_words(s) & target)).strip()
