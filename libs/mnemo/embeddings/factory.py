"""Pick the embedder the settings ask for."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.contracts.embedder import Embedder
    from mnemo.settings import Settings


def embedder_from_settings(settings: Settings, *, on_event_loop: bool = False) -> Embedder:
    """`local` (default, bundled model), `openai` (any compatible server) or `hash` (tests).
    `on_event_loop`: the local model runs on the event loop's thread (`LocalEmbedder`)."""
    provider = settings.embedding_provider
    if provider == "local":
        from mnemo.embeddings.local import LocalEmbedder

        return LocalEmbedder(on_event_loop=on_event_loop)
    if provider == "openai":
        from mnemo.embeddings.openai_embedder import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    if provider == "hash":
        from mnemo.embeddings.hashing import HashEmbedder

        return HashEmbedder(dim=settings.embedding_dim)
    raise ValueError(f"unknown embedding provider {provider!r}")
