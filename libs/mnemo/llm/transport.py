"""The one way mnemo builds an `AsyncOpenAI` client (chat and embeddings alike).

The openai package's default transport (httpx) spends milliseconds of event-loop CPU per
request once dozens are in flight (its connection pool is scanned per request); its aiohttp
transport, which the openai docs recommend for concurrency, does not. Measured on the
pipeline bench: see bench/ and the README's performance section.
"""

from __future__ import annotations

from openai import AsyncOpenAI, DefaultAioHttpClient

# The openai client refuses to start without a key; local servers (vLLM, Ollama) ignore it.
PLACEHOLDER_API_KEY = "unused"


def async_openai(base_url: str | None, api_key: str | None, timeout: float) -> AsyncOpenAI:
    """An `AsyncOpenAI` on the aiohttp transport. Retries are off: callers retry with
    tenacity so that metrics and logs see every attempt."""
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or PLACEHOLDER_API_KEY,
        timeout=timeout,
        max_retries=0,
        http_client=DefaultAioHttpClient(timeout=timeout),
    )
