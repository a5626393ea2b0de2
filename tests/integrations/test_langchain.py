"""remember/recall as LangChain tools, in a real LangGraph ReAct agent whose model is the
real langchain-openai client talking to the scripted OpenAI-compatible server."""

from __future__ import annotations

import pytest

from mnemo.client.aio import AsyncMnemoClient
from tests.integrations.conftest import EXTRA_MISSING, Tenant
from tests.support.scripted_llm import ScriptedLLMServer, last_tool_output, text_turn, tool_call

pytest.importorskip("langgraph.prebuilt", reason=EXTRA_MISSING)
pytest.importorskip("langchain_openai", reason=EXTRA_MISSING)

from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

from mnemo.integrations.langchain import memory_tools


def model(server: ScriptedLLMServer) -> ChatOpenAI:
    return ChatOpenAI(model="scripted", base_url=server.base_url, api_key="test")


async def test_an_agent_remembers_a_fact_and_recalls_it(
    tenant: Tenant, client: AsyncMnemoClient, agent_llm: ScriptedLLMServer
) -> None:
    agent_llm.agent_turns(
        [
            tool_call("remember", fact="I moved to Lisbon last month"),
            tool_call("recall", query="where does the user live"),
            lambda request: text_turn(f"From memory: {last_tool_output(request)}"),
        ]
    )
    agent = create_react_agent(model(agent_llm), memory_tools(client, tenant.user))
    result = await agent.ainvoke({"messages": [("user", "I moved to Lisbon. Where do I live?")]})

    tool_results = [m.content for m in result["messages"] if m.type == "tool"]
    assert tool_results[0].startswith("Remembered (1 new")
    assert "Lisbon" in tool_results[1]
    assert result["messages"][-1].content.startswith("From memory: - ")
    assert "Lisbon" in result["messages"][-1].content

    # Stored under the tools' user, and that user's only.
    stored = await client.memories.list(user_id=tenant.user)
    assert any("Lisbon" in memory.content for memory in stored)
    assert len(await client.memories.search("Lisbon", user_id=f"{tenant.user}-other")) == 0


async def test_recall_says_so_when_nothing_is_remembered(
    tenant: Tenant, client: AsyncMnemoClient
) -> None:
    remember, recall = memory_tools(client, tenant.user)
    assert [remember.name, recall.name] == ["remember", "recall"]
    assert recall.args_schema is not None
    assert (
        await recall.ainvoke({"query": "favourite colour"}) == "Nothing is remembered about that."
    )
