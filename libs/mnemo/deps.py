"""What every step receives: the dependency bundle (the batch in flight is
`mnemo.domain.batch.Batch`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM
from mnemo.settings import Settings


@dataclass
class Deps:
    """The dependency bundle: store (engine), llm, embedder, clock and settings."""

    db: AsyncEngine
    llm: LLM
    embedder: Embedder
    clock: Clock
    settings: Settings = field(default_factory=Settings)

    async def aclose(self) -> None:
        """Close the network clients (HTTP sessions) among the providers; the database
        belongs to whoever created it."""
        for provider in (self.llm, self.embedder):
            close = getattr(provider, "aclose", None)  # local providers hold no session
            if close is not None:
                await close()
