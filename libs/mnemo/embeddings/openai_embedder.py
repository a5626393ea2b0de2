"""Embeddings from any OpenAI-compatible `/embeddings` endpoint."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import openai
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)

from mnemo.errors import MnemoError
from mnemo.llm.openai_client import (
    describe_error,
    is_transient,
    retry_wait,
    scrub_secret,
)
from mnemo.llm.transport import async_openai

if TYPE_CHECKING:
    from mnemo.settings import Settings

log = logging.getLogger(__name__)

BATCH_SIZE = 256


class EmbeddingError(MnemoError, RuntimeError):
    """The embedding server gave no usable vectors, after bounded retries."""


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm > 0 else vector


class OpenAIEmbedder:
    """`Embedder` calling `embeddings.create` in batches of 256, returning unit vectors."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        dim: int,
        timeout: float = 60.0,
        max_attempts: int = 4,
        retry_wait_scale: float = 1.0,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        """`retry_wait_scale` multiplies every backoff wait; tests pass 0 to retry at once.
        `query_prefix` / `document_prefix` go in front of every search query / every other
        text, for models trained with them (nomic-embed-text: "search_query: " and
        "search_document: "). They change the vectors, so they are part of the label."""
        self.model = model
        self.dim = dim
        self.label = f"openai-compatible:{model}"
        if query_prefix or document_prefix:
            self.label += f" (query {query_prefix!r}, document {document_prefix!r})"
        self._query_prefix, self._document_prefix = query_prefix, document_prefix
        self.max_attempts = max_attempts
        self._api_key = api_key
        self._retry_wait_scale = retry_wait_scale
        # Only the text-embedding-3 family can shorten its vectors on request.
        self._send_dimensions = model.startswith("text-embedding-3")
        self._client = async_openai(base_url, api_key, timeout)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIEmbedder:
        """Falls back to the LLM server and key when no embedding-specific ones are set."""
        secret = settings.embedding_api_key or settings.llm_api_key
        return cls(
            base_url=settings.embedding_base_url or settings.llm_base_url,
            api_key=secret.get_secret_value() if secret else None,
            model=settings.embedding_model,
            dim=settings.embedding_dim,
            timeout=settings.llm_timeout_seconds,
            max_attempts=settings.llm_max_attempts,
            query_prefix=settings.embedding_query_prefix,
            document_prefix=settings.embedding_document_prefix,
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order. Raises EmbeddingError on failure."""
        return await self._embed_all([self._document_prefix + text for text in texts])

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed_all([self._query_prefix + text for text in texts])

    async def _embed_all(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            vectors.extend(await self._embed_batch(texts[start : start + BATCH_SIZE]))
        return vectors

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        # OpenAI rejects empty strings; a lone space embeds as "nothing" just as well.
        inputs = [text if text else " " for text in batch]
        attempts = 0
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=retry_wait(self._retry_wait_scale),
            retry=retry_if_exception(is_transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    return await self._request(inputs)
        except openai.OpenAIError as exc:
            plural = "attempt" if attempts == 1 else "attempts"
            message = f"Embedding with {self.model} failed after {attempts} {plural}: "
            raise EmbeddingError(
                scrub_secret(message + describe_error(exc), self._api_key)
            ) from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    async def _request(self, inputs: list[str]) -> list[list[float]]:
        extra: dict[str, Any] = {"dimensions": self.dim} if self._send_dimensions else {}
        response = await self._client.embeddings.create(
            model=self.model, input=inputs, encoding_format="float", **extra
        )
        ordered = sorted(response.data, key=lambda item: item.index)
        if len(ordered) != len(inputs):
            raise EmbeddingError(f"asked for {len(inputs)} vectors, got {len(ordered)}")
        vectors = [_unit([float(x) for x in item.embedding]) for item in ordered]
        if vectors and len(vectors[0]) != self.dim:
            raise EmbeddingError(
                f"{self.model} returns {len(vectors[0])}-dimensional vectors but "
                f"MNEMO_EMBEDDING_DIM is {self.dim}"
            )
        return vectors

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "embedding attempt %d/%d failed (%s); retrying",
            state.attempt_number,
            self.max_attempts,
            scrub_secret(describe_error(exc), self._api_key) if exc else "unknown",
        )
