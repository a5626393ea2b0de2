"""remember/recall as Pydantic AI tools, in a real `Agent.run` whose model is Pydantic AI's
OpenAI chat model over the real `openai` client and the scripted server."""

from __future__ import annotations

import pytest

from mnemo.client.aio import AsyncMnemoClient
from tests.integrations.conftest import EXTRA_MISSING, Tenant
from tests.support.scripted_llm import ScriptedLLMServer, last_tool_output, text_turn, tool_call

pytest.importorskip("pydantic_ai", reason=EXTRA_MISSING)

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from mnemo.integrations.pydantic_ai import memory_tools


async def test_an_agent_remembers_a_fact_and_recalls_it(
    tenant: Tenant, client: AsyncMnemoClient, agent_llm: ScriptedLLMServer
) -> None:
    agent_llm.agent_turns(
        [
            tool_call("remember", fact="I am training for the Berlin marathon"),
            tool_call("recall", query="marathon"),
            lambda request: text_turn(f"From memory: {last_tool_output(request)}"),
        ]
    )
    model = OpenAIChatModel(
        "scripted", provider=OpenAIProvider(base_url=agent_llm.base_url, api_key="test")
    )
    agent = Agent(model, tools=memory_tools(client, tenant.user))
    result = await agent.run("I'm training for the Berlin marathon. What am I training for?")

    returns = [
        part.content
        for message in result.all_messages()
        for part in message.parts
        if part.part_kind == "tool-return"
    ]
    assert str(returns[0]).startswith("Remembered (1 new")
    assert "marathon" in str(returns[1])
    assert result.output.startswith("From memory: - ")
    stored = await client.memories.list(user_id=tenant.user)
    assert any("marathon" in memory.content for memory in stored)
