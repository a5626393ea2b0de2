"""Extract atomic memories that match the group's topics from one input."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from mnemo.llm.base import ChatMessage, Prompt


class TopicBrief(BaseModel):
    name: str
    description: str
    is_bounded: bool = False
    # A bounded topic's current memory in this scope: the answer must return it updated.
    current: str | None = None


class Context(BaseModel):
    topics: list[TopicBrief]
    input_type: str
    # "role: content" lines for conversations, or plain strings.
    units: list[str]
    # Earlier inputs of the same scope (sliding window), for reference only.
    window: list[str] = Field(default_factory=list)
    instructions: str = ""
    today: str = ""


class ExtractedMemory(BaseModel):
    topic: str
    content: str


class Response(BaseModel):
    memories: list[ExtractedMemory]


def messages(ctx: Context) -> list[ChatMessage]:
    topics = "\n".join(
        f"- {t.name}{' (bounded: exactly one memory, return it complete and updated)' if t.is_bounded else ''}: "
        f"{t.description}" + (f"\n  current: {t.current}" if t.current else "")
        for t in ctx.topics
    )
    system = (
        "You maintain an AI agent's long-term memory. Extract atomic, self-contained memories "
        "from the input that match one of the topics below. Write each in the third person, "
        "referring to the user as 'User' (e.g. 'User works from home.'). Skip small talk, "
        "questions and anything that matches no topic. For a bounded topic return at most one "
        "memory: its full updated content, merging the current content with the new facts.\n"
        f"Today is {ctx.today}.\nTopics:\n{topics}"
        + (f"\nAdditional instructions: {ctx.instructions}" if ctx.instructions else "")
    )
    body = {"input_type": ctx.input_type, "input": ctx.units}
    if ctx.window:
        body["earlier_context_do_not_extract"] = ctx.window
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
    ]


PROMPT = Prompt(name="extract", context_model=Context, response_model=Response, messages=messages)
