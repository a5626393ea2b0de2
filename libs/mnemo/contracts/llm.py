"""The LLM contract: a named prompt plus its typed context in, a validated response out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from mnemo.errors import MnemoError

C = TypeVar("C", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)

ChatMessage = dict[str, str]


@dataclass(frozen=True)
class Prompt(Generic[C, R]):
    """One LLM task. Call sites pass the prompt itself, so logs and metrics carry its name."""

    name: str
    context_model: type[C]
    response_model: type[R]
    messages: Callable[[C], list[ChatMessage]]


class LLMError(MnemoError, RuntimeError):
    """The model could not give a valid answer, after bounded retries. The run fails with it."""


class LLM(Protocol):
    # Shown in logs and run errors, e.g. "openai-compatible:gpt-4o-mini" or "offline-heuristics".
    # A provider may also say what produced its answers (`produced_by`): the model's name, or
    # "offline"; runs record it.
    label: str

    async def complete(self, prompt: Prompt[C, R], context: C) -> R:
        """Answer `prompt` for `context` with a response that validates as the prompt's model.

        Raises LLMError when retries are spent (rate limits, 5xx, timeouts, invalid JSON).
        """
        ...


def produced_by(llm: object) -> str:
    """What a provider's answers are labelled with on runs: its `produced_by` (the model's
    name, or "offline") or, for a provider without one, its `label`."""
    named = getattr(llm, "produced_by", None)
    return str(named) if named else str(getattr(llm, "label", "unknown"))
