"""Hand-written embedders for tests: other models of the hash embedder's size."""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.embeddings.hashing import hash_embedding


class SaltedEmbedder:
    """Another 384-d model: the hash embedding of the text with a salt in front.
    `label` defaults to `salted:<salt>`; `fail_after` calls, it fails like a lost server."""

    def __init__(
        self, salt: str = "other", fail_after: int | None = None, label: str | None = None
    ) -> None:
        self.dim, self.label, self.salt = 384, label or f"salted:{salt}", salt
        self.fail_after, self.calls = fail_after, 0

    def vector(self, text: str) -> list[float]:
        return hash_embedding(f"{self.salt} {text}", self.dim)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise ConnectionError("embedding server went away")
        return [self.vector(t) for t in texts]

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embed(texts)
