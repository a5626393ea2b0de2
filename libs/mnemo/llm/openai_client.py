"""The LLM provider for any OpenAI-compatible chat-completions server.

Structured output is requested either as a JSON schema (`response_format`) or as one forced
tool call, then validated with the prompt's pydantic response model. The client retries 429,
5xx, timeouts, connection errors and invalid answers itself, a bounded number of times with
jittered exponential backoff; everything else fails fast. Either way the caller only ever
sees `LLMError`, which fails the run (`mnemo.core.failures`: an LLM that stays down is not
a transient pipeline failure).
"""

from __future__ import annotations

import logging
import re
import time
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Literal

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from mnemo.contracts.llm import C, LLMError, Prompt, R
from mnemo.errors import connection_cause, describe
from mnemo.llm.transport import PLACEHOLDER_API_KEY, async_openai
from mnemo.metrics import LLM_CALLS, LLM_ERRORS, LLM_LATENCY, LLM_TOKENS
from mnemo.tracing.genai import Usage, llm_call

if TYPE_CHECKING:
    from mnemo.settings import Settings

log = logging.getLogger(__name__)

StructuredOutput = Literal["json_schema", "tools"]

PROVIDER = "openai-compatible"

RETRY_BASE_SECONDS = 0.2
RETRY_MAX_SECONDS = 5.0

_MAX_DETAIL_CHARS = 300
# What `chat.completions.create` asks of the client: the API key as a bearer token.
_AUTHORIZED: Any = {"security": {"bearer_auth": True}}


class InvalidOutputError(Exception):
    """The server answered, but not with JSON that validates as the prompt's response model."""


def error_kind(exc: BaseException) -> str:
    """The metric label of a failed attempt.

    One of rate_limit, server, timeout, connection, invalid_output or client.
    """
    if isinstance(exc, openai.RateLimitError):
        return "rate_limit"
    if isinstance(exc, openai.APIStatusError):
        return "server" if exc.status_code >= 500 else "client"
    # A subclass of APIConnectionError: test it first. The aiohttp transport reports a
    # refused connection as a connect timeout; the socket error under it tells the truth.
    if isinstance(exc, openai.APITimeoutError) and connection_cause(exc) is None:
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, InvalidOutputError):
        return "invalid_output"
    return "client"


def is_transient(exc: BaseException) -> bool:
    """True for failures worth another attempt: 429, 5xx, timeouts, connection, invalid output."""
    return error_kind(exc) in {"rate_limit", "server", "timeout", "connection", "invalid_output"}


def describe_error(exc: BaseException) -> str:
    """A short human-readable reason, e.g. '503 Service Unavailable: model overloaded'."""
    if isinstance(exc, openai.APIStatusError):
        try:
            text = f"{exc.status_code} {HTTPStatus(exc.status_code).phrase}"
        except ValueError:
            text = f"HTTP {exc.status_code}"
        detail = _server_message(exc.body)
        return f"{text}: {_truncate(detail)}" if detail else text
    # The aiohttp transport reports a refused connection as a connect *timeout*; the root
    # cause tells the truth.
    refused = connection_cause(exc)
    if isinstance(exc, openai.APITimeoutError) and refused is None:
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = refused or exc.__cause__
        return (
            f"connection error ({type(cause).__name__}: {cause})" if cause else "connection error"
        )
    if isinstance(exc, InvalidOutputError):
        return f"invalid output: {_truncate(str(exc))}"
    return describe(exc, _MAX_DETAIL_CHARS)


def retry_wait(scale: float = 1.0) -> wait_exponential_jitter:
    """Jittered exponential backoff: ~0.2 s, 0.4 s, 0.8 s ... capped at 5 s, times `scale`."""
    return wait_exponential_jitter(
        initial=RETRY_BASE_SECONDS * scale,
        max=RETRY_MAX_SECONDS * scale,
        jitter=RETRY_BASE_SECONDS * scale,
    )


def scrub_secret(text: str, secret: str | None) -> str:
    """Remove a secret from a message, in case a server echoes it back."""
    if secret and secret != PLACEHOLDER_API_KEY and secret in text:
        return text.replace(secret, "***")
    return text


def _server_message(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        return ""
    return str(body) if body else ""


def _truncate(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL_CHARS else text[: _MAX_DETAIL_CHARS - 3] + "..."


_CODE_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _strip_code_fence(text: str) -> str:
    match = _CODE_FENCE.match(text)
    return match.group(1) if match else text


def _parse(response_model: type[R], raw: str | None) -> R:
    if not raw or not raw.strip():
        raise InvalidOutputError("empty answer")
    try:
        return response_model.model_validate_json(_strip_code_fence(raw))
    except ValidationError as exc:
        raise InvalidOutputError(f"{exc.error_count()} error(s): {exc.errors()[0]['msg']}") from exc


class OpenAICompatibleLLM:
    """`LLM` backed by an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        timeout: float = 60.0,
        max_attempts: int = 4,
        structured_output: StructuredOutput = "json_schema",
        retry_wait_scale: float = 1.0,
    ) -> None:
        """`retry_wait_scale` multiplies every backoff wait; tests pass 0 to retry at once."""
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if structured_output not in ("json_schema", "tools"):
            raise ValueError(f"unknown structured_output mode {structured_output!r}")
        self.model = model
        self.label = f"{PROVIDER}:{model}"
        self.produced_by = model
        self.max_attempts = max_attempts
        self.structured_output: StructuredOutput = structured_output
        self._api_key = api_key
        self._retry_wait_scale = retry_wait_scale
        self._schemas: dict[type[BaseModel], dict[str, Any]] = {}
        self._client = async_openai(base_url, api_key, timeout)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAICompatibleLLM:
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return cls(
            base_url=settings.llm_base_url,
            api_key=key,
            model=settings.llm_model,
            timeout=settings.llm_timeout_seconds,
            max_attempts=settings.llm_max_attempts,
            structured_output=settings.llm_structured_output,
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(self, prompt: Prompt[C, R], context: C) -> R:
        """Answer `prompt` for `context`; raises LLMError once retries are spent. One trace
        span covers the call, retries included (`mnemo.tracing.genai`)."""
        request = self._request(prompt, context)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=retry_wait(self._retry_wait_scale),
            retry=retry_if_exception(is_transient),
            before_sleep=self._log_retry(prompt.name),
            reraise=True,
        )
        base_url = str(self._client.base_url)
        with llm_call(prompt=prompt.name, model=self.model, base_url=base_url) as usage:
            try:
                async for attempt in retrying:
                    with attempt:
                        usage.attempts = attempt.retry_state.attempt_number
                        return await self._attempt(prompt, request, usage)
            except (openai.OpenAIError, InvalidOutputError) as exc:
                plural = "attempt" if usage.attempts == 1 else "attempts"
                message = f"LLM prompt '{prompt.name}' failed after {usage.attempts} {plural}: "
                message += describe_error(exc)
                usage.error = error_kind(exc)
                raise LLMError(scrub_secret(message, self._api_key)) from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _request(self, prompt: Prompt[C, R], context: C) -> dict[str, Any]:
        schema = self._schema(prompt.response_model)
        request: dict[str, Any] = {"model": self.model, "messages": prompt.messages(context)}
        if self.structured_output == "json_schema":
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": prompt.name, "schema": schema, "strict": False},
            }
        else:
            request["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": prompt.name,
                        "description": f"Return the answer of the '{prompt.name}' task.",
                        "parameters": schema,
                    },
                }
            ]
            request["tool_choice"] = {"type": "function", "function": {"name": prompt.name}}
        return request

    def _schema(self, model: type[BaseModel]) -> dict[str, Any]:
        if model not in self._schemas:
            self._schemas[model] = model.model_json_schema()
        return self._schemas[model]

    async def _attempt(self, prompt: Prompt[C, R], request: dict[str, Any], usage: Usage) -> R:
        log.debug("LLM call prompt=%s model=%s attempt=%d", prompt.name, self.model, usage.attempts)
        LLM_CALLS.labels(prompt=prompt.name, provider=PROVIDER).inc()
        started = time.perf_counter()
        try:
            # The request as built, without `chat.completions.create`: that walks every
            # message and the schema against its parameter types (a few % of a pipeline
            # worker's CPU, py-spy) to send the very same JSON. Same client, same HTTP.
            completion = await self._client.post(
                "/chat/completions", cast_to=ChatCompletion, body=request, options=_AUTHORIZED
            )
            usage.add(completion)
            self._count_tokens(prompt.name, completion.usage)
            return _parse(prompt.response_model, self._raw_answer(prompt.name, completion))
        except (openai.OpenAIError, InvalidOutputError) as exc:
            LLM_ERRORS.labels(prompt=prompt.name, kind=error_kind(exc)).inc()
            raise
        finally:
            LLM_LATENCY.labels(prompt=prompt.name).observe(time.perf_counter() - started)

    def _raw_answer(self, prompt_name: str, completion: Any) -> str | None:
        if not completion.choices:
            raise InvalidOutputError("no choices in the answer")
        message = completion.choices[0].message
        if self.structured_output == "tools":
            calls = [c for c in (message.tool_calls or []) if getattr(c, "function", None)]
            named = [c for c in calls if c.function.name == prompt_name]
            if named or calls:
                return str((named or calls)[0].function.arguments)
            # Some servers ignore tool_choice and answer in plain content; accept that too.
        return message.content

    @staticmethod
    def _count_tokens(prompt_name: str, usage: Any) -> None:
        if usage is None:
            return
        if usage.prompt_tokens:
            LLM_TOKENS.labels(prompt=prompt_name, direction="prompt").inc(usage.prompt_tokens)
        if usage.completion_tokens:
            LLM_TOKENS.labels(prompt=prompt_name, direction="completion").inc(
                usage.completion_tokens
            )

    def _log_retry(self, prompt_name: str) -> Any:
        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            wait = state.next_action.sleep if state.next_action else 0.0
            log.warning(
                "LLM prompt %s attempt %d/%d failed (%s); retrying in %.2fs",
                prompt_name,
                state.attempt_number,
                self.max_attempts,
                scrub_secret(describe_error(exc), self._api_key) if exc else "unknown",
                wait,
            )

        return before_sleep
