"""The start-up probe of the configured LLM: one tiny structured answer, to show that the
server answers, knows the model, and honours the structured-output mode mnemo will use."""

from __future__ import annotations

from pydantic import BaseModel

from mnemo.contracts.llm import ChatMessage, Prompt


class Context(BaseModel):
    word: str = "mnemo"


class Response(BaseModel):
    # The word the prompt asked for, echoed back.
    word: str


def messages(context: Context) -> list[ChatMessage]:
    return [
        {"role": "system", "content": "You answer in JSON only, following the given schema."},
        {"role": "user", "content": f"Return the word {context.word!r} in the field `word`."},
    ]


PROMPT: Prompt[Context, Response] = Prompt("probe", Context, Response, messages)
