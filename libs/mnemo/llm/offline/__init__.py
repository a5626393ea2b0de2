"""Offline heuristics standing in for an LLM when none is configured (not a language model)."""

from mnemo.llm.offline.provider import OfflineLLM

__all__ = ["OfflineLLM"]
