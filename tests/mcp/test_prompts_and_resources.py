"""The MCP surface beyond tools, through the mcp SDK's client over Streamable HTTP and stdio:
memories as resources (a scope's newest, one by id, isolated per user as the tools are),
the remember and recall prompts, and tool results that validate against their output
schemas."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.api.fixtures import Tenant
from tests.mcp.conftest import Connect
from tests.mcp.tools import call

pytestmark = pytest.mark.integration
WAIT = 30


async def _read(client: Client, uri: str) -> Any:
    return json.loads((await client.read_resource(uri)).contents[0].text)  # type: ignore[union-attr]


async def _remember(client: Client, text: str, user: str) -> str:
    run = await call(client, "add_memory", text=text, user_id=user, wait_seconds=WAIT)
    return str(run["committed_operations"]["created"][0]["memory_id"])


async def test_memories_are_resources_isolated_per_user(tenant: Tenant, connect: Connect) -> None:
    async with connect(tenant.url, tenant.key) as client:
        templates = await client.list_resource_templates()
        assert {t.uri_template for t in templates.resource_templates} == {
            "mnemo://groups/{name}",
            "mnemo://groups/{group}/memories{?user_id}",
            "mnemo://groups/{group}/memories/{memory_id}{?user_id}",
        }
        memory_id = await _remember(client, "I keep bees in the garden", tenant.user)
        await _remember(client, "I like tea", "someone-else")

        scope = await _read(client, f"mnemo://groups/default/memories?user_id={tenant.user}")
        assert [m["id"] for m in scope["memories"]] == [memory_id] and scope["total"] == 1
        one = await _read(
            client, f"mnemo://groups/default/memories/{memory_id}?user_id={tenant.user}"
        )
        assert one["content"] == "User said: I keep bees in the garden"
        # The same addresses as another user: their own scope, and 404 for this memory.
        theirs = await _read(client, "mnemo://groups/default/memories?user_id=someone-else")
        assert memory_id not in [m["id"] for m in theirs["memories"]]
        with pytest.raises(MCPError, match="404"):
            await client.read_resource(
                f"mnemo://groups/default/memories/{memory_id}?user_id=someone-else"
            )
        with pytest.raises(MCPError, match="422"):  # a user this project has never seen
            await client.read_resource(
                f"mnemo://groups/default/memories/{memory_id}?user_id=nobody"
            )
        shared = await _read(client, "mnemo://groups/default/memories")  # no user: shared only
        assert memory_id not in [m["id"] for m in shared["memories"]]


async def test_remember_and_recall_prompts(tenant: Tenant, connect: Connect) -> None:
    async with connect(tenant.url, tenant.key) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"remember", "recall"}
        for prompt, required in (("remember", "fact"), ("recall", "question")):
            arguments = {a.name: a for a in prompts[prompt].arguments or []}
            assert set(arguments) == {required, "user_id", "group"}
            assert arguments[required].required and not arguments["user_id"].required
            assert prompts[prompt].description

        asked = await client.get_prompt("remember", {"fact": "My locker code is 4711",
                                                     "user_id": tenant.user})  # fmt: skip
        [message] = asked.messages
        assert message.role == "user" and "add_memory" in message.content.text  # type: ignore[union-attr]
        assert "My locker code is 4711" in message.content.text  # type: ignore[union-attr]

        await _remember(client, "My locker code is 4711", tenant.user)
        mine = await client.get_prompt("recall", {"question": "What is my locker code?",
                                                  "user_id": tenant.user})  # fmt: skip
        text = mine.messages[0].content.text  # type: ignore[union-attr]
        assert "4711" in text and text.endswith("Question: What is my locker code?")
        theirs = await client.get_prompt("recall", {"question": "What is my locker code?",
                                                    "user_id": "someone-else"})  # fmt: skip
        assert "4711" not in theirs.messages[0].content.text  # type: ignore[union-attr]


async def test_every_tool_result_validates_against_its_output_schema(
    tenant: Tenant, connect: Connect
) -> None:
    async with connect(tenant.url, tenant.key) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        run = await call(client, "add_memory", text="I sail dinghies", user_id=tenant.user,
                         wait_seconds=WAIT)  # fmt: skip
        memory_id = run["committed_operations"]["created"][0]["memory_id"]
        calls = [
            ("search_memories", {"query": "sail", "user_id": tenant.user}),
            ("list_memories", {"user_id": tenant.user}),
            ("get_memory", {"memory_id": memory_id, "user_id": tenant.user}),
            ("memory_history", {"memory_id": memory_id, "user_id": tenant.user}),
            ("run_status", {"run_id": run["run_id"]}),
            ("list_groups", {}),
            ("delete_memory", {"memory_id": memory_id, "user_id": tenant.user}),
        ]
        jsonschema.validate(run, schemas["add_memory"])  # type: ignore[arg-type]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error and result.structured_content is not None, tool
            jsonschema.validate(result.structured_content, schemas[tool])  # type: ignore[arg-type]
            # the text block carries the same result, for clients that read text only
            assert json.loads(result.content[0].text) == result.structured_content, tool  # type: ignore[union-attr]
        assert set(schemas) == {"add_memory", *(tool for tool, _ in calls)}
