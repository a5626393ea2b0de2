"""Transform a whole batch of memories at once (e.g. fragments into one experience)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from mnemo.llm.base import ChatMessage, Prompt
from mnemo.prompts.extract import ExtractedMemory, TopicBrief


class Context(BaseModel):
    instructions: str
    output_topics: list[TopicBrief]
    items: list[ExtractedMemory]


class Response(BaseModel):
    memories: list[ExtractedMemory]


def messages(ctx: Context) -> list[ChatMessage]:
    topics = "\n".join(f"- {t.name}: {t.description}" for t in ctx.output_topics)
    system = (
        "You transform a batch of memories of an AI agent as instructed. Return the complete "
        "list of memories that should continue down the pipeline, each with one of the "
        f"allowed topics.\nAllowed topics:\n{topics}\nInstructions: {ctx.instructions}"
    )
    items = [m.model_dump() for m in ctx.items]
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps({"memories": items}, ensure_ascii=False)},
    ]


PROMPT = Prompt(name="transform", context_model=Context, response_model=Response, messages=messages)
