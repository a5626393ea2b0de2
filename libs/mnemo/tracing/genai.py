"""LLM call spans after OpenTelemetry's GenAI semantic conventions: one CLIENT span per
logical call (retries included) named `chat {model}`, with the model, the token usage and
the prompt's name. Prompts and answers are never recorded (they hold users' data)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mnemo.tracing.spans import Span, span


@dataclass
class Usage:
    """Tokens and answers over a call's attempts."""

    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 0
    response_model: str | None = None
    response_id: str | None = None
    finish_reasons: list[str] = field(default_factory=list)
    error: str | None = None  # the failure's kind, e.g. rate_limit, server, timeout

    def add(self, completion: Any) -> None:
        usage = getattr(completion, "usage", None)
        if usage is not None:
            self.input_tokens += usage.prompt_tokens or 0
            self.output_tokens += usage.completion_tokens or 0
        self.response_model = getattr(completion, "model", None) or self.response_model
        self.response_id = getattr(completion, "id", None) or self.response_id
        reasons = [c.finish_reason for c in getattr(completion, "choices", None) or []]
        self.finish_reasons = [str(r) for r in reasons if r] or self.finish_reasons


@contextmanager
def llm_call(
    *, prompt: str, model: str, base_url: str | None, output: str = "json"
) -> Iterator[Usage]:
    """The span of one LLM call; fill the Usage it yields as attempts are answered."""
    server = urlsplit(base_url) if base_url else None
    usage = Usage()
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": model,
        "gen_ai.prompt.name": prompt,
        "gen_ai.output.type": output,
        "server.address": server.hostname if server else None,
        "server.port": server.port if server else None,
    }
    with span(f"chat {model}", attributes, kind="client") as current:
        try:
            yield usage
        finally:
            _record(current, usage)


def _record(current: Span, usage: Usage) -> None:
    current.update(
        {
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "gen_ai.response.model": usage.response_model,
            "gen_ai.response.id": usage.response_id,
            "gen_ai.response.finish_reasons": usage.finish_reasons or None,
            "mnemo.llm.attempts": usage.attempts,
            "error.type": usage.error,
        }
    )
