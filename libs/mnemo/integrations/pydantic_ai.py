"""remember/recall as Pydantic AI tools (`pip install 'mnemo[agents]'`).

agent = Agent(model, tools=memory_tools(client, user_id="ada"))
result = await agent.run("Where do I live?")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemo.client.aio import AsyncMnemoClient
from mnemo.integrations.memory_tools import MemoryTools, documented_functions, require

if TYPE_CHECKING:
    from pydantic_ai import Tool


def memory_tools(
    client: AsyncMnemoClient, user_id: str, *, group: str | None = None, limit: int = 5
) -> list[Tool[Any]]:
    """`remember` and `recall` for `user_id` (fixed here, never chosen by the model)."""
    pydantic_ai = require("pydantic_ai", "Pydantic AI")
    remember, recall = documented_functions(MemoryTools(client, user_id, group, limit))
    return [
        pydantic_ai.Tool(remember, takes_ctx=False, name="remember"),
        pydantic_ai.Tool(recall, takes_ctx=False, name="recall"),
    ]
