"""The embedder contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    # Vector size; it must match the database's vector column.
    dim: int
    label: str

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order. Cosine similarity = dot product."""
        ...
