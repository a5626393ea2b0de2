"""remember/recall as LangChain tools, for LangGraph agents (`create_react_agent`,
`ToolNode`) and anything else that takes a LangChain `BaseTool`.

    tools = memory_tools(AsyncMnemoClient(base_url=..., api_key=...), user_id="ada")
    agent = create_react_agent(ChatOpenAI(model=...), tools)

The tools are async (`ainvoke`, `astream`), as mnemo's client is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

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
    from langchain_core.tools import BaseTool


class RememberArgs(BaseModel):
    fact: str = Field(min_length=1, description=FACT_DESCRIPTION)


class RecallArgs(BaseModel):
    query: str = Field(min_length=1, description=QUERY_DESCRIPTION)


def memory_tools(
    client: AsyncMnemoClient, user_id: str, *, group: str | None = None, limit: int = 5
) -> list[BaseTool]:
    """`remember` and `recall` for `user_id` (fixed here, never chosen by the model)."""
    tools = require("langchain_core.tools", "LangChain")
    core = MemoryTools(client, user_id, group, limit)
    return [
        tools.StructuredTool.from_function(
            coroutine=core.remember,
            name="remember",
            description=REMEMBER_DESCRIPTION,
            args_schema=RememberArgs,
        ),
        tools.StructuredTool.from_function(
            coroutine=core.recall,
            name="recall",
            description=RECALL_DESCRIPTION,
            args_schema=RecallArgs,
        ),
    ]
