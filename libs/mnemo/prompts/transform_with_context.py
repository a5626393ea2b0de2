"""Reconcile new memories with related committed ones: keep, rewrite or delete each."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from mnemo.contracts.llm import ChatMessage, Prompt
from mnemo.prompts.extract import stamp


class ExistingMemory(BaseModel):
    id: str
    topic: str
    content: str
    # When its evidence happened (the end of its event-time range).
    event_time: datetime | None = None
    # Context only: it may not be rewritten or deleted (e.g. reconsolidation's only_recalled).
    read_only: bool = False


class NewMemory(BaseModel):
    index: int
    topic: str
    content: str
    event_time: datetime | None = None


class Context(BaseModel):
    instructions: str
    existing: list[ExistingMemory]
    new: list[NewMemory]


class ExistingDecision(BaseModel):
    id: str
    action: Literal["keep", "rewrite", "delete"]
    content: str | None = None


class NewDecision(BaseModel):
    index: int
    action: Literal["keep", "rewrite", "delete"]
    content: str | None = None


class Response(BaseModel):
    existing: list[ExistingDecision]
    new: list[NewDecision]


def messages(ctx: Context) -> list[ChatMessage]:
    system = (
        "You keep an AI agent's memory consistent. You get EXISTING committed memories and "
        "NEW memories. Decide for every existing and every new memory: 'keep' it, 'rewrite' it "
        "(give the full new content) or 'delete' it. Never lose information silently: when a "
        "new fact changes an existing one, rewrite the existing memory. Omitted memories are "
        "kept unchanged. event_time (UTC) says when a memory's evidence happened: the later "
        "one is the current fact."
        + (
            " Existing memories marked read_only are context only: keep them."
            if any(m.read_only for m in ctx.existing)
            else ""
        )
        + f"\nInstructions: {ctx.instructions}"
    )
    body = {
        "existing": [shown(m) for m in ctx.existing],
        "new": [shown(m) for m in ctx.new],
    }
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
    ]


def shown(memory: ExistingMemory | NewMemory) -> dict[str, object]:
    """The memory as the prompt shows it: event time as a UTC stamp; `read_only` only when
    set, so the prompt of a pipeline without reconsolidation is unchanged."""
    out = memory.model_dump(exclude={"event_time", "read_only"})
    if isinstance(memory, ExistingMemory) and memory.read_only:
        out["read_only"] = True
    if memory.event_time is not None:
        out["event_time"] = stamp(memory.event_time)
    return out


PROMPT = Prompt(
    name="transform_with_context", context_model=Context, response_model=Response, messages=messages
)
