"""remember/recall as OpenAI Agents SDK function tools, in a real `Runner.run` whose model is
the SDK's chat-completions model over the real `openai` client and the scripted server."""

from __future__ import annotations

import pytest
from openai import AsyncOpenAI

from mnemo.client.aio import AsyncMnemoClient
from tests.integrations.conftest import EXTRA_MISSING, Tenant
from tests.support.scripted_llm import ScriptedLLMServer, last_tool_output, text_turn, tool_call

pytest.importorskip("agents", reason=EXTRA_MISSING)

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled

from mnemo.integrations.openai_agents import memory_tools

set_tracing_disabled(True)  # the SDK would export its traces to OpenAI


async def test_an_agent_remembers_a_fact_and_recalls_it(
    tenant: Tenant, client: AsyncMnemoClient, agent_llm: ScriptedLLMServer
) -> None:
    agent_llm.agent_turns(
        [
            tool_call("remember", fact="My daughter Mia was born in March"),
            tool_call("recall", query="daughter"),
            lambda request: text_turn(f"From memory: {last_tool_output(request)}"),
        ]
    )
    model = OpenAIChatCompletionsModel(
        model="scripted", openai_client=AsyncOpenAI(base_url=agent_llm.base_url, api_key="test")
    )
    agent = Agent(name="assistant", model=model, tools=memory_tools(client, tenant.user))
    result = await Runner.run(agent, "My daughter Mia was born in March. Who is my daughter?")

    assert [tool.name for tool in agent.tools] == ["remember", "recall"]
    outputs = [item.output for item in result.new_items if item.type == "tool_call_output_item"]
    assert str(outputs[0]).startswith("Remembered (1 new")
    assert "Mia" in str(outputs[1])
    assert str(result.final_output).startswith("From memory: - ")
    assert "Mia" in str(result.final_output)
    stored = await client.memories.list(user_id=tenant.user)
    assert any("Mia" in memory.content for memory in stored)


def test_the_tools_describe_their_arguments(client: AsyncMnemoClient, tenant: Tenant) -> None:
    remember, recall = memory_tools(client, tenant.user)
    assert remember.params_json_schema["required"] == ["fact"]
    assert "self-contained fact" in remember.params_json_schema["properties"]["fact"]["description"]
    assert recall.params_json_schema["required"] == ["query"]
    assert "Search what is remembered" in recall.description
