"""The test-only hash embedder: deterministic, unit-length, word overlap means similarity."""

from __future__ import annotations

import math

from mnemo.embeddings.hashing import HashEmbedder, tokens


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_vectors_are_deterministic_and_unit_length() -> None:
    embedder = HashEmbedder(dim=64)
    first, again, empty = await embedder.embed(["User likes hiking", "User likes hiking", ""])

    assert embedder.dim == 64 and len(first) == 64
    assert first == again
    assert math.isclose(math.fsum(v * v for v in first), 1.0)
    assert math.isclose(math.fsum(v * v for v in empty), 1.0)


async def test_shared_words_score_clearly_higher_than_unrelated_text() -> None:
    base, related, unrelated = await HashEmbedder().embed(
        ["The user works from home", "User worked from home on Mondays", "Bananas are yellow"]
    )

    assert cosine(base, related) > 0.4
    assert abs(cosine(base, unrelated)) < 0.2
    assert cosine(base, related) > cosine(base, unrelated) + 0.3


def test_tokens_drop_stopwords_and_strip_simple_suffixes() -> None:
    assert tokens("The user is Hiking with dogs and walked") == ["user", "hik", "dog", "walk"]
