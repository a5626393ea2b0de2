"""Transform a whole batch of memories at once (e.g. fragments into one experience)."""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import BaseModel

from mnemo.contracts.llm import ChatMessage, Prompt
from mnemo.prompts.extract import ExtractedMemory, TopicBrief, stamp


class Item(BaseModel):
    topic: str
    content: str
    # When the item's evidence happened (the end of its event-time range).
    event_time: datetime | None = None


class Context(BaseModel):
    instructions: str
    output_topics: list[TopicBrief]
    items: list[Item]


class Response(BaseModel):
    # `evidence`: indexes of the items a memory rests on; empty means the whole batch.
    memories: list[ExtractedMemory]


def messages(ctx: Context) -> list[ChatMessage]:
    topics = "\n".join(f"- {t.name}: {t.description}" for t in ctx.output_topics)
    system = (
        "You transform a batch of memories of an AI agent as instructed. Return the complete "
        "list of memories that should continue down the pipeline, each with one of the "
        "allowed topics and its evidence: the indexes of the items it rests on. Each item "
        "carries when it happened (event_time, UTC).\n"
        f"Allowed topics:\n{topics}\nInstructions: {ctx.instructions}"
    )
    items = [
        {"topic": m.topic, "content": m.content}
        | ({"event_time": stamp(m.event_time)} if m.event_time else {})
        for m in ctx.items
    ]
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps({"memories": items}, ensure_ascii=False)},
    ]


PROMPT = Prompt(name="transform", context_model=Context, response_model=Response, messages=messages)
