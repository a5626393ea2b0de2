"""The embedder contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    # Vector size; it must match the database's vector column.
    dim: int
    label: str

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order, for texts that are stored or compared
        with stored ones (memories, drafts). Cosine similarity = dot product."""
        ...

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of search queries, in the space of `embed`. Models trained with a query
        instruction (e5, bge, nomic-embed-text) add it here; others embed as `embed`."""
        ...
