"""Similarity helpers over unit-length embeddings (cosine = dot product).

Everything here compares whole lists at once with numpy (a matrix product per block of rows),
so an add of a thousand sentences costs milliseconds of BLAS, not a million Python-level
comparisons. The functions are synchronous and pure: the provider runs them off the event
loop.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from mnemo.contracts.embedder import Embedder
from mnemo.llm.offline.text import normalized

# Rows of a similarity matrix computed at once: bounds memory to BLOCK x columns floats.
BLOCK = 256


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

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        """The embeddings of `texts` (each embedded by `of`), one row each."""
        if not texts:
            return np.zeros((0, self._matrix.shape[1]), dtype=self._matrix.dtype)
        return self._matrix[[self._index[t] for t in texts]]

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts embedded by `of` (for a few pairs; use
        `similarities` or `blocks` for whole lists)."""
        return float(self._matrix[self._index[a]] @ self._matrix[self._index[b]])

    def similarities(self, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """The (len(rows), len(columns)) matrix of cosine similarities."""
        return self.rows(rows) @ self.rows(columns).T

    def blocks(
        self, rows: Sequence[str], columns: Sequence[str]
    ) -> Iterator[tuple[int, np.ndarray]]:
        """`similarities(rows, columns)` a block of rows at a time: (first row, block)."""
        right = self.rows(columns).T
        for start in range(0, len(rows), BLOCK):
            yield start, self.rows(rows[start : start + BLOCK]) @ right


def is_duplicate(vectors: Vectors, a: str, b: str, threshold: float) -> bool:
    """The same text once case, punctuation and spacing are ignored, or embeddings at least
    `threshold` similar."""
    return normalized(a) == normalized(b) or vectors.similarity(a, b) >= threshold


def best_columns(vectors: Vectors, rows: Sequence[str], columns: Sequence[str]) -> list[int]:
    """For each row, the index of its most similar column; ties go to the earlier column."""
    if not rows or not columns:
        return []
    out: list[int] = []
    for _, block in vectors.blocks(rows, columns):
        out.extend(int(i) for i in np.argmax(block, axis=1))
    return out


def dedupe(
    vectors: Vectors, sentences: Sequence[str], seen: Sequence[str], threshold: float
) -> list[str]:
    """`sentences` minus those duplicating one in `seen` or an earlier kept one, in order."""
    if not sentences:
        return []
    keys = [normalized(s) for s in sentences]
    taken = {normalized(s) for s in seen}
    near_seen = np.zeros(len(sentences), dtype=bool)
    if seen:
        for start, block in vectors.blocks(sentences, seen):
            near_seen[start : start + len(block)] = (block >= threshold).any(axis=1)
    kept_mask = np.zeros(len(sentences), dtype=bool)
    kept: list[str] = []
    for start, block in vectors.blocks(sentences, sentences):
        near = block >= threshold
        for offset, row in enumerate(near):
            i = start + offset
            if near_seen[i] or keys[i] in taken or (row & kept_mask).any():
                continue
            kept_mask[i] = True
            taken.add(keys[i])
            kept.append(sentences[i])
    return kept
