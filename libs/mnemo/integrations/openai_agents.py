"""remember/recall as OpenAI Agents SDK function tools (`pip install 'mnemo[agents]'`).

agent = Agent(name="assistant", tools=memory_tools(client, user_id="ada"))
result = await Runner.run(agent, "Where do I live?")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemo.client.aio import AsyncMnemoClient
from mnemo.integrations.memory_tools import (
    FACT_DESCRIPTION,
    QUERY_DESCRIPTION,
    RECALL_DESCRIPTION,
    REMEMBER_DESCRIPTION,
    MemoryTools,
    require,
)

if TYPE_CHECKING:
    from agents import FunctionTool


def memory_tools(
    client: AsyncMnemoClient, user_id: str, *, group: str | None = None, limit: int = 5
) -> list[FunctionTool]:
    """`remember` and `recall` for `user_id` (fixed here, never chosen by the model)."""
    sdk = require("agents", "OpenAI Agents SDK")
    core = MemoryTools(client, user_id, group, limit)

    async def remember(fact: str) -> str:
        return await core.remember(fact)

    async def recall(query: str) -> str:
        return await core.recall(query)

    remember.__doc__ = f"{REMEMBER_DESCRIPTION}\n\nArgs:\n    fact: {FACT_DESCRIPTION}"
    recall.__doc__ = f"{RECALL_DESCRIPTION}\n\nArgs:\n    query: {QUERY_DESCRIPTION}"
    return [
        sdk.function_tool(remember, name_override="remember"),
        sdk.function_tool(recall, name_override="recall"),
    ]
