"""OpenAICompatibleLLM against the real scripted HTTP server (no mocks of openai)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest
from prometheus_client import REGISTRY

from mnemo.contracts.llm import LLMError
from mnemo.llm.openai_client import OpenAICompatibleLLM, StructuredOutput
from mnemo.prompts import extract
from tests.support.scripted_llm import ScriptedLLMServer

API_KEY = "sk-test-secret-key-123"
ANSWER = {"memories": [{"topic": "work", "content": "User works from home."}]}


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


# Clients a test made; each holds an aiohttp session, closed after the test.
MADE: list[OpenAICompatibleLLM] = []


@pytest.fixture(autouse=True)
async def close_clients() -> AsyncIterator[None]:
    yield
    while MADE:
        await MADE.pop().aclose()


@pytest.fixture
def server(scripted: ScriptedLLMServer) -> Iterator[ScriptedLLMServer]:
    scripted.reset()
    yield scripted
    scripted.reset()


def make_llm(
    server: ScriptedLLMServer,
    *,
    mode: StructuredOutput = "json_schema",
    max_attempts: int = 4,
    timeout: float = 5.0,
) -> OpenAICompatibleLLM:
    llm = OpenAICompatibleLLM(
        base_url=server.base_url,
        api_key=API_KEY,
        model="scripted-model",
        timeout=timeout,
        max_attempts=max_attempts,
        structured_output=mode,
        retry_wait_scale=0.0,
    )
    MADE.append(llm)
    return llm


def extract_context() -> extract.Context:
    return extract.Context(
        topics=[extract.TopicBrief(name="work", description="How the user works")],
        input_type="conversation",
        units=[
            extract.DatedUnit(text=text, at=datetime(2025, 1, 1, tzinfo=UTC))
            for text in ("user: I work from home", "assistant: Nice!")
        ],
    )


def error_count(kind: str) -> float:
    labels = {"prompt": "extract", "kind": kind}
    return REGISTRY.get_sample_value("mnemo_llm_errors_total", labels) or 0.0


@pytest.mark.parametrize("mode", ["json_schema", "tools"])
async def test_structured_answer_parses_into_the_response_model(
    server: ScriptedLLMServer, mode: StructuredOutput
) -> None:
    server.script("extract", ANSWER)
    llm = make_llm(server, mode=mode)

    response = await llm.complete(extract.PROMPT, extract_context())

    assert response == extract.Response.model_validate(ANSWER)
    assert llm.label == "openai-compatible:scripted-model"
    [(name, request)] = server.calls
    assert name == "extract"
    assert server.authorizations == [f"Bearer {API_KEY}"]
    assert request["model"] == "scripted-model"
    assert request["messages"] == extract.messages(extract_context())
    if mode == "json_schema":
        assert request["response_format"]["json_schema"]["name"] == "extract"
        assert "memories" in request["response_format"]["json_schema"]["schema"]["properties"]
        assert "tools" not in request
    else:
        assert request["tools"][0]["function"]["name"] == "extract"
        assert request["tool_choice"] == {"type": "function", "function": {"name": "extract"}}
        assert "response_format" not in request


async def test_token_usage_is_counted(server: ScriptedLLMServer) -> None:
    server.script("extract", ANSWER)
    labels = {"prompt": "extract", "direction": "completion"}
    before = REGISTRY.get_sample_value("mnemo_llm_tokens_total", labels) or 0.0

    await make_llm(server).complete(extract.PROMPT, extract_context())

    assert (REGISTRY.get_sample_value("mnemo_llm_tokens_total", labels) or 0.0) > before


async def test_server_errors_are_retried_until_success(server: ScriptedLLMServer) -> None:
    server.script("extract", ANSWER)
    server.fail("extract", status=503, times=2)
    before = error_count("server")

    response = await make_llm(server).complete(extract.PROMPT, extract_context())

    assert response.memories[0].content == "User works from home."
    assert len(server.calls) == 3
    assert error_count("server") == before + 2


async def test_rate_limit_spends_all_attempts_then_raises_a_readable_error(
    server: ScriptedLLMServer,
) -> None:
    server.script("extract", ANSWER)
    server.fail("extract", status=429, times=100)

    with pytest.raises(LLMError) as raised:
        await make_llm(server, max_attempts=3).complete(extract.PROMPT, extract_context())

    message = str(raised.value)
    assert message.startswith("LLM prompt 'extract' failed after 3 attempts: 429 Too Many Requests")
    assert API_KEY not in message
    assert len(server.calls) == 3


async def test_invalid_json_is_retried(server: ScriptedLLMServer) -> None:
    server.script("extract", ANSWER)
    server.invalid_json("extract", times=1)
    before = error_count("invalid_output")

    response = await make_llm(server).complete(extract.PROMPT, extract_context())

    assert response == extract.Response.model_validate(ANSWER)
    assert len(server.calls) == 2
    assert error_count("invalid_output") == before + 1


async def test_an_answer_of_the_wrong_shape_is_retried(server: ScriptedLLMServer) -> None:
    server.script("extract", [{"memories": [{"topic": "work"}]}, ANSWER])

    response = await make_llm(server, mode="tools").complete(extract.PROMPT, extract_context())

    assert response == extract.Response.model_validate(ANSWER)
    assert len(server.calls) == 2


async def test_a_client_error_is_not_retried(server: ScriptedLLMServer) -> None:
    server.script("extract", ANSWER)
    server.fail("extract", status=400, times=5)
    before = error_count("client")

    with pytest.raises(LLMError, match=r"failed after 1 attempt: 400 Bad Request"):
        await make_llm(server).complete(extract.PROMPT, extract_context())

    assert len(server.calls) == 1
    assert error_count("client") == before + 1


async def test_timeouts_are_retried(server: ScriptedLLMServer) -> None:
    server.script("extract", ANSWER)
    server.delay_seconds = 5.0

    # A timeout long enough for each request to reach the server on a loaded machine (at
    # 0.05 s the second attempt sometimes gave up before the server had read it), far below
    # the server's delay.
    with pytest.raises(LLMError, match=r"failed after 2 attempts: request timed out"):
        await make_llm(server, max_attempts=2, timeout=0.5).complete(
            extract.PROMPT, extract_context()
        )

    assert len(server.calls) == 2


async def test_a_missing_script_fails_loudly_naming_the_prompt(server: ScriptedLLMServer) -> None:
    with pytest.raises(LLMError, match=r"no script for prompt 'extract'"):
        await make_llm(server, max_attempts=2).complete(extract.PROMPT, extract_context())


async def test_connection_errors_are_retried_then_reported() -> None:
    with ScriptedLLMServer() as stopped:
        base_url = stopped.base_url
    llm = OpenAICompatibleLLM(
        base_url=base_url, api_key=None, model="m", max_attempts=2, retry_wait_scale=0.0
    )
    MADE.append(llm)
    refused, timeouts = error_count("connection"), error_count("timeout")

    with pytest.raises(LLMError, match=r"failed after 2 attempts: connection error"):
        await llm.complete(extract.PROMPT, extract_context())
    # A refused connection is labelled as one, not as a timeout (the transport's word).
    assert (error_count("connection"), error_count("timeout")) == (refused + 2, timeouts)
