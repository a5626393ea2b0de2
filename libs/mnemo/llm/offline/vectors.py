"""Similarity helpers over unit-length embeddings (cosine = dot product)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mnemo.embeddings.base import Embedder
from mnemo.llm.offline.text import normalized


class Vectors:
    """The embeddings of one call's texts, fetched in a single batched `embed` call."""

    def __init__(self, texts: Sequence[str], matrix: np.ndarray) -> None:
        self._index = {text: i for i, text in enumerate(texts)}
        self._matrix = matrix

    @classmethod
    async def of(cls, embedder: Embedder, texts: Sequence[str]) -> Vectors:
        unique = list(dict.fromkeys(texts))
        if not unique:
            return cls([], np.zeros((0, 0)))
        rows = await embedder.embed(unique)
        return cls(unique, np.asarray(rows, dtype=np.float64))

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts that were embedded by `of`."""
        i, j = self._index[a], self._index[b]
        return float(self._matrix[i] @ self._matrix[j])


def same_text(a: str, b: str) -> bool:
    """Equal once case, punctuation and spacing are ignored."""
    return normalized(a) == normalized(b)


def is_duplicate(vectors: Vectors, a: str, b: str, threshold: float) -> bool:
    """The same text, or embeddings at least `threshold` similar."""
    return same_text(a, b) or vectors.similarity(a, b) >= threshold


def dedupe(
    vectors: Vectors, sentences: Sequence[str], seen: Sequence[str], threshold: float
) -> list[str]:
    """`sentences` minus those duplicating one in `seen` or an earlier kept one, in order."""
    kept: list[str] = []
    for sentence in sentences:
        if any(is_duplicate(vectors, sentence, other, threshold) for other in [*seen, *kept]):
            continue
        kept.append(sentence)
    return kept
