"""A tiny deterministic bag-of-words embedder. FOR UNIT TESTS ONLY.

It has no notion of meaning: texts that share (crudely stemmed) words get a high cosine,
unrelated texts a cosine near zero. That is enough to exercise dedupe and search logic in
fast tests without loading a model. Never use it for real memories.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from hashlib import blake2b

WORD_WEIGHT = 1.0
TRIGRAM_WEIGHT = 0.25

_WORD = re.compile(r"\w+")
_SUFFIXES = ("ing", "es", "ed", "s")
_MIN_STEM = 3
_STOPWORDS = frozenset(
    "a an and are as at be been but by for from has have he her his i in is it its me my "
    "of on or our she so that the their them they this to was we were what when which who "
    "will with you your".split()
)


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return word[: -len(suffix)]
    return word


def tokens(text: str) -> list[str]:
    """Lower-cased, crudely stemmed words without stopwords."""
    words = (w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)
    return [_stem(w) for w in words]


def _bucket_and_sign(feature: str, dim: int) -> tuple[int, float]:
    digest = int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return digest % dim, 1.0 if (digest >> 63) & 1 else -1.0


def hash_embedding(text: str, dim: int = 384) -> list[float]:
    """The unit-length vector for one text: hashed words plus lighter hashed trigrams."""
    vector = [0.0] * dim
    for token in tokens(text):
        bucket, sign = _bucket_and_sign("w:" + token, dim)
        vector[bucket] += sign * WORD_WEIGHT
        padded = f"#{token}#"
        for i in range(len(padded) - 2):
            bucket, sign = _bucket_and_sign("t:" + padded[i : i + 3], dim)
            vector[bucket] += sign * TRIGRAM_WEIGHT
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        # Empty or stopword-only text: still a unit vector, the same for all such texts.
        bucket, sign = _bucket_and_sign("empty", dim)
        vector[bucket] = sign
        return vector
    return [v / norm for v in vector]


class HashEmbedder:
    """Deterministic `Embedder` for unit tests only; see the module docstring."""

    def __init__(self, dim: int = 384) -> None:
        if dim < 8:
            raise ValueError("dim must be at least 8")
        self.dim = dim
        self.label = f"hash:{dim}"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [hash_embedding(text, self.dim) for text in texts]

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embed(texts)
