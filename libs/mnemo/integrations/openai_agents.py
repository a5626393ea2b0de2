"""remember/recall as OpenAI Agents SDK function tools (`pip install 'mnemo[agents]'`).

agent = Agent(name="assistant", tools=memory_tools(client, user_id="ada"))
result = await Runner.run(agent, "Where do I live?")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemo.client.aio import AsyncMnemoClient
from mnemo.integrations.memory_tools import MemoryTools, documented_functions, require

if TYPE_CHECKING:
    from agents import FunctionTool


def memory_tools(
    client: AsyncMnemoClient, user_id: str, *, group: str | None = None, limit: int = 5
) -> list[FunctionTool]:
    """`remember` and `recall` for `user_id` (fixed here, never chosen by the model)."""
    sdk = require("agents", "OpenAI Agents SDK")
    remember, recall = documented_functions(MemoryTools(client, user_id, group, limit))
    return [
        sdk.function_tool(remember, name_override="remember"),
        sdk.function_tool(recall, name_override="recall"),
    ]
