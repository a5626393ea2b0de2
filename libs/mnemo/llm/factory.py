"""Pick the LLM the settings ask for."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.contracts.embedder import Embedder
    from mnemo.contracts.llm import LLM
    from mnemo.settings import Settings


def llm_from_settings(settings: Settings, embedder: Embedder) -> LLM:
    """The OpenAI-compatible client when a base URL or key is set, else the offline heuristics."""
    if settings.llm_configured:
        from mnemo.llm.openai_client import OpenAICompatibleLLM

        return OpenAICompatibleLLM.from_settings(settings)
    from mnemo.llm.offline import OfflineLLM

    return OfflineLLM(embedder)
