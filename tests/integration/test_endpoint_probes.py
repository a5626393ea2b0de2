"""The start-up probes of the configured LLM and embedder, against a real OpenAI-compatible
HTTP server (the scripted one) through the real `openai` client."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from mnemo.core.endpoints import EndpointChecks
from mnemo.core.probes import configured_probes
from mnemo.settings import Settings
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True) as server:
        yield server


def _settings(**values: object) -> Settings:
    return Settings(**{"embedding_provider": "hash", "llm_api_key": "k", **values})  # type: ignore[arg-type]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _checks(settings: Settings) -> dict[str, tuple[bool, str]]:
    results = await EndpointChecks(configured_probes(settings)).run()
    return {c.name: (c.ok, c.detail) for c in results}


async def test_nothing_to_check_offline() -> None:
    assert configured_probes(Settings(embedding_provider="local")) == {}


async def test_a_working_llm_passes(llm: ScriptedLLMServer) -> None:
    checks = await _checks(_settings(llm_base_url=llm.base_url, llm_model="scripted"))
    ok, detail = checks["llm"]
    assert ok, detail
    assert "model 'scripted' listed" in detail and "json_schema answers" in detail


async def test_an_unreachable_llm_is_named() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    ok, detail = (await _checks(_settings(llm_base_url=url, llm_model="m")))["llm"]
    assert not ok
    assert url in detail and "unreachable" in detail


async def test_a_missing_model_is_named(llm: ScriptedLLMServer) -> None:
    ok, detail = (await _checks(_settings(llm_base_url=llm.base_url, llm_model="llama9")))["llm"]
    assert not ok
    assert "model 'llama9' not found" in detail and "scripted" in detail
    assert "MNEMO_LLM_MODEL" in detail


async def test_broken_structured_output_is_named(llm: ScriptedLLMServer) -> None:
    llm.invalid_json("probe", times=1)
    try:
        checks = await _checks(_settings(llm_base_url=llm.base_url, llm_model="scripted"))
    finally:
        llm.reset()
    ok, detail = checks["llm"]
    assert not ok
    assert "structured output (json_schema) failed" in detail
    assert "MNEMO_LLM_STRUCTURED_OUTPUT=tools" in detail


async def test_an_embedder_of_another_size_is_named(llm: ScriptedLLMServer) -> None:
    settings = Settings(
        embedding_provider="openai",
        embedding_base_url=llm.base_url,
        embedding_model="scripted",
        embedding_dim=128,
    )
    ok, detail = (await _checks(settings))["embedder"]
    assert not ok
    assert "384" in detail and "MNEMO_EMBEDDING_DIM is 128" in detail


async def test_a_matching_embedder_passes(llm: ScriptedLLMServer) -> None:
    settings = Settings(
        embedding_provider="openai", embedding_base_url=llm.base_url, embedding_model="scripted"
    )
    ok, detail = (await _checks(settings))["embedder"]
    assert ok, detail
