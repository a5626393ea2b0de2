"""MCP prompts: "remember" and "recall", the two things a user asks of a memory.

`remember` writes nothing itself (a prompt is fetched, not approved): it asks the assistant
to call `add_memory`, so the write goes through the tool and its confirmation. `recall`
reads: it searches the user's memories and hands them to the assistant with the question,
so a client without tool calls still answers from memory. The texts are built by pure
functions, tested without a server.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from pydantic import Field

from mnemo.client.models import retrieval as retrieval_config
from mnemo.domain.memory import Memory
from mnemo.mcp.binding import current_client

RECALLED = 10  # memories handed to the assistant by `recall`

Fact = Annotated[str, Field(min_length=1, max_length=10_000, description="What to remember.")]
Question = Annotated[
    str, Field(min_length=1, max_length=10_000, description="What to recall, in plain words.")
]
User = Annotated[
    str | None, Field(max_length=256, description="The user the memories belong to, if any.")
]
GroupName = Annotated[str, Field(min_length=1, max_length=64, description="The group.")]


def remember_text(fact: str, user_id: str | None, group: str) -> str:
    """The request to store `fact` through the add_memory tool."""
    arguments = {"text": fact, "group": group, "wait_seconds": 10}
    if user_id:
        arguments["user_id"] = user_id
    return (
        "Remember the following for the long term, using mnemo's add_memory tool with "
        f"these arguments: {json.dumps(arguments, ensure_ascii=False)}. Then say in one "
        "sentence what was stored (the run's committed operations), or why nothing was.\n\n"
        f"To remember: {fact}"
    )


def recall_text(question: str, found: Sequence[Memory]) -> str:
    """The question with the memories found for it, best first."""
    if not found:
        known = "mnemo holds no memory that matches this."
    else:
        lines = [
            f"- {m.content} (topic {m.topic}, updated {m.updated_at.date().isoformat()}, id {m.id})"
            for m in found
        ]
        known = "What mnemo remembers that may bear on it, best match first:\n" + "\n".join(lines)
    return (
        f"{known}\n\nAnswer from these memories where they apply, and say so when they do "
        f"not cover the question.\n\nQuestion: {question}"
    )


async def remember(fact: Fact, user_id: User = None, group: GroupName = "default") -> list[Message]:
    """Store something in long-term memory: asks the assistant to call add_memory."""
    return [UserMessage(remember_text(fact, user_id, group))]


async def recall(
    question: Question, user_id: User = None, group: GroupName = "default"
) -> list[Message]:
    """Answer from memory: the memories that match the question, then the question."""
    found = await current_client().memories.search(
        question,
        user_id=user_id,
        group=group,
        retrieval_config=retrieval_config("hybrid", RECALLED),
    )
    return [UserMessage(recall_text(question, list(found)))]


def register_prompts(server: MCPServer) -> None:
    server.prompt(title="Remember this")(remember)
    server.prompt(title="Recall from memory")(recall)
