"""Probes of an OpenAI-compatible LLM or embeddings endpoint (`mnemo.core.endpoints`):
reachable, the model listed (when the server lists models), the structured output or the
vector size as configured. Each call is one attempt with a short timeout."""

from __future__ import annotations

import asyncio
from typing import Any

import openai

from mnemo.contracts.llm import LLMError
from mnemo.core.endpoints import PROBE_TIMEOUT_SECONDS, EndpointProblem, Probe
from mnemo.settings import Settings


async def _listed_models(client: Any, where: str) -> list[str] | None:
    """The model ids the server lists; None when it does not list them (not an error)."""
    try:
        page = await client.models.list()
    except openai.APIConnectionError as exc:
        raise EndpointProblem(f"{where} is unreachable ({exc.__cause__ or exc})") from exc
    except openai.AuthenticationError as exc:
        raise EndpointProblem(f"{where} refused the API key (401)") from exc
    except openai.APIStatusError:
        return None  # e.g. 404: some servers do not list their models
    return [m.id for m in page.data]


def _model_check(model: str, listed: list[str] | None, where: str, variable: str) -> str:
    if listed is None:
        return "the server does not list models"
    if model not in listed:
        shown = ", ".join(listed[:8]) + (", ..." if len(listed) > 8 else "")
        raise EndpointProblem(
            f"model '{model}' not found at {where} (it lists: {shown or 'none'}); set {variable}"
        )
    return f"model '{model}' listed"


def llm_probe(settings: Settings) -> Probe:
    from mnemo.llm.openai_client import OpenAICompatibleLLM
    from mnemo.prompts import probe

    async def check() -> str:
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        llm = OpenAICompatibleLLM(
            base_url=settings.llm_base_url,
            api_key=key,
            model=settings.llm_model,
            timeout=min(settings.llm_timeout_seconds, PROBE_TIMEOUT_SECONDS),
            max_attempts=1,
            structured_output=settings.llm_structured_output,
        )
        where = str(llm._client.base_url).rstrip("/")
        try:
            model = _model_check(
                settings.llm_model, await _listed_models(llm._client, where), where,
                "MNEMO_LLM_MODEL",
            )  # fmt: skip
            mode = settings.llm_structured_output
            try:
                answer = await llm.complete(probe.PROMPT, probe.Context())
            except LLMError as exc:
                other = "tools" if mode == "json_schema" else "json_schema"
                raise EndpointProblem(
                    f"structured output ({mode}) failed at {where}: {exc}; "
                    f"try MNEMO_LLM_STRUCTURED_OUTPUT={other}"
                ) from exc
            return f"{llm.label} at {where}: {model}; {mode} answers ({answer.word!r})"
        finally:
            await llm.aclose()

    return check


def embedder_probe(settings: Settings) -> Probe:
    from mnemo.embeddings.openai_embedder import EmbeddingError, OpenAIEmbedder

    async def check() -> str:
        embedder = OpenAIEmbedder.from_settings(settings)
        embedder.max_attempts = 1
        where = str(embedder._client.base_url).rstrip("/")
        try:
            model = _model_check(
                settings.embedding_model, await _listed_models(embedder._client, where), where,
                "MNEMO_EMBEDDING_MODEL",
            )  # fmt: skip
            try:
                async with asyncio.timeout(PROBE_TIMEOUT_SECONDS):
                    vectors = await embedder.embed(["mnemo"])
            except (EmbeddingError, openai.OpenAIError, TimeoutError) as exc:
                raise EndpointProblem(f"embedding at {where} failed: {exc}") from exc
            if len(vectors[0]) != settings.embedding_dim:  # the embedder checks it too
                raise EndpointProblem(
                    f"'{settings.embedding_model}' at {where} gives {len(vectors[0])}-d vectors, "
                    f"MNEMO_EMBEDDING_DIM is {settings.embedding_dim}"
                )
            return f"{embedder.label} at {where}: {model}; {len(vectors[0])}-d vectors"
        finally:
            await embedder.aclose()

    return check


def configured_probes(settings: Settings) -> dict[str, Probe]:
    """The endpoints these settings call: none for the offline provider and local model."""
    probes: dict[str, Probe] = {}
    if settings.llm_configured:
        probes["llm"] = llm_probe(settings)
    if settings.embedding_provider == "openai":
        probes["embedder"] = embedder_probe(settings)
    return probes
