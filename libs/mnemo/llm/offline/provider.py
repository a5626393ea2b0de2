"""`OfflineLLM`: the default provider when no language model is configured.

It is NOT a language model. It answers the pipeline's prompts with deterministic
heuristics over the typed prompt context (sentence rules, templates and embedding similarity)
so that a quickstart produces sensible memories without an API key. It never reads the
rendered prompt text.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel

from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import C, LLMError, Prompt, R
from mnemo.llm.offline.combined import extract_reconcile
from mnemo.llm.offline.consolidate import consolidate
from mnemo.llm.offline.extract import ExtractTuning, extract
from mnemo.llm.offline.gate import GateTuning, gate
from mnemo.llm.offline.offload import Offload
from mnemo.llm.offline.reconcile import ReconcileTuning, reconcile
from mnemo.llm.offline.transform import transform
from mnemo.prompts import consolidate as consolidate_prompt
from mnemo.prompts import extract as extract_prompt
from mnemo.prompts import extract_reconcile as combined_prompt
from mnemo.prompts import reconsolidate as gate_prompt
from mnemo.prompts import transform as transform_prompt
from mnemo.prompts import transform_with_context as twc_prompt

log = logging.getLogger(__name__)

WARNING = (
    "No LLM is configured: mnemo uses offline heuristics (sentence rules and embedding "
    "similarity), not a language model. Memories will be cruder; configure an "
    "OpenAI-compatible LLM for real extraction and reconciliation."
)


class OfflineLLM:
    """Heuristic stand-in for an LLM, dispatching on `prompt.name`.

    `dedupe_threshold`: similarity at or above which two sentences count as the same fact.
    `bounded_threshold`: similarity a sentence needs to a bounded topic's brief to be merged
    into it (summary/history-like bounded topics take every sentence).
    `similar_threshold`: similarity at or above which two "User <verb> ..." sentences with the
    same verb are taken to state the same attribute.
    The defaults are calibrated on the bundled bge-small, whose cosines run high (unrelated
    texts 0.4-0.6): paraphrases of one fact 0.96-0.99, "prefers dark mode" / "prefers light
    mode" 0.93, "lives in Berlin" / "lives in Lisbon" 0.81, different facts about a user
    0.67-0.74.
    """

    label = "offline-heuristics"
    produced_by = "offline"

    def __init__(
        self,
        embedder: Embedder,
        dedupe_threshold: float = 0.95,
        *,
        bounded_threshold: float = 0.57,
        similar_threshold: float = 0.78,
    ) -> None:
        self.embedder = embedder
        self.dedupe_threshold = dedupe_threshold
        self.bounded_threshold = bounded_threshold
        self.similar_threshold = similar_threshold
        self._warned = False
        self._offload = Offload()

    async def complete(self, prompt: Prompt[C, R], context: C) -> R:
        """Answer `prompt` heuristically. Raises LLMError for a prompt it does not know."""
        self._warn_once()
        answer = await self._answer(prompt.name, context)
        return prompt.response_model.model_validate(answer.model_dump())

    async def _answer(self, name: str, context: BaseModel) -> BaseModel:
        if name == extract_prompt.PROMPT.name:
            tuning = ExtractTuning(
                self.dedupe_threshold, self.bounded_threshold, self.similar_threshold
            )
            ctx = _as(extract_prompt.Context, context)
            return await extract(ctx, self.embedder, tuning, self._offload)
        if name == transform_prompt.PROMPT.name:
            return await transform(_as(transform_prompt.Context, context), self.embedder)
        if name == twc_prompt.PROMPT.name:
            tuning_r = ReconcileTuning(self.dedupe_threshold, self.similar_threshold)
            ctx_r = _as(twc_prompt.Context, context)
            return await reconcile(ctx_r, self.embedder, tuning_r, self._offload)
        if name == combined_prompt.PROMPT.name:
            tunings = (
                ExtractTuning(
                    self.dedupe_threshold, self.bounded_threshold, self.similar_threshold
                ),
                ReconcileTuning(self.dedupe_threshold, self.similar_threshold),
            )
            ctx_c = _as(combined_prompt.Context, context)
            return await extract_reconcile(ctx_c, self.embedder, tunings, self._offload)
        if name == gate_prompt.PROMPT.name:
            tuning_g = GateTuning(self.dedupe_threshold, self.similar_threshold)
            return await gate(_as(gate_prompt.Context, context), self.embedder, tuning_g)
        if name == consolidate_prompt.PROMPT.name:
            ctx = _as(consolidate_prompt.Context, context)
            return await consolidate(ctx, self.embedder, self.dedupe_threshold)
        raise LLMError(f"{self.label} has no heuristic for prompt {name!r}")

    async def aclose(self) -> None:
        """Stop the heuristics' thread pool (work still queued is dropped)."""
        self._offload.close()

    def _warn_once(self) -> None:
        if not self._warned:
            self._warned = True
            log.warning(WARNING)


def _as(model: type[Any], context: BaseModel) -> Any:
    """`context` as `model`, re-validated if a caller passed an equivalent model."""
    return context if isinstance(context, model) else model.model_validate(context.model_dump())
