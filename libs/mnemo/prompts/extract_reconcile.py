"""Extract and reconcile in one call: the extract task, shown the scope's close memories.

The engine chooses it for an extract -> transform_with_context -> commit pipeline when the
committed memories close to the input fit the prompt (`steps.extract_reconcile`): the model
returns only the memories to create, and a keep/rewrite/delete verdict for each existing
memory, so transform_with_context has nothing left to ask.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from mnemo.contracts.llm import ChatMessage, Prompt
from mnemo.prompts import extract as extract_prompt
from mnemo.prompts.extract import ExtractedMemory
from mnemo.prompts.transform_with_context import ExistingDecision, ExistingMemory, shown


class Context(BaseModel):
    extract: extract_prompt.Context
    existing: list[ExistingMemory]
    # The transform_with_context step's instructions.
    reconcile_instructions: str = ""


class Response(BaseModel):
    # Only the memories to create: a restatement of an existing memory, or a new fact that
    # rewrote one, is left out.
    memories: list[ExtractedMemory] = Field(default_factory=list)
    existing: list[ExistingDecision] = Field(default_factory=list)


_RECONCILE = (
    "\nEXISTING lists committed memories of this user that are close to the input. Keep the "
    "memory consistent: leave out of `memories` anything an existing memory already says. "
    "When the input changes what an existing memory states, give that memory the verdict "
    "'rewrite' with its full new content (and leave the new fact out of `memories`), or "
    "'delete' when it no longer holds. Omitted existing memories are kept unchanged. "
    "event_time (UTC) says when a memory's evidence happened: the later one is the current "
    'fact. Answer {"memories": [...], "existing": [{"id", "action", "content"}]}.'
)


def messages(ctx: Context) -> list[ChatMessage]:
    system, user = extract_prompt.messages(ctx.extract)
    text = system["content"] + _RECONCILE
    if ctx.reconcile_instructions:
        text += f"\nReconcile instructions: {ctx.reconcile_instructions}"
    body = json.loads(user["content"])
    body["existing"] = [shown(m) for m in ctx.existing]
    return [
        {"role": "system", "content": text},
        {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
    ]


def size(ctx: Context) -> int:
    """The prompt's length in characters: what the engine holds against its budget."""
    return sum(len(m["content"]) for m in messages(ctx))


PROMPT = Prompt(
    name="extract_reconcile", context_model=Context, response_model=Response, messages=messages
)
