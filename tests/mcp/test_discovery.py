"""What an agent discovers: described, typed tools and the groups as resources (both transports)."""

from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError

from tests.api.fixtures import Tenant
from tests.mcp.conftest import Connect
from tests.mcp.tools import call

pytestmark = pytest.mark.integration

TOOLS = {
    "add_memory", "search_memories", "list_memories", "get_memory", "memory_history",
    "delete_memory", "run_status", "list_groups",
}  # fmt: skip
READ_ONLY = TOOLS - {"add_memory", "delete_memory"}


async def test_tools_are_described_and_typed(tenant: Tenant, connect: Connect) -> None:
    async with connect(tenant.url, tenant.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.output_schema is not None, tool.name
        assert bool(tool.annotations and tool.annotations.read_only_hint) == (
            tool.name in READ_ONLY
        ), tool.name
    add = tools["add_memory"].input_schema["properties"]
    assert {"text", "messages", "items", "user_id", "group", "properties", "wait_seconds"} <= set(
        add
    )
    assert all(add[name].get("description") for name in ("user_id", "group", "wait_seconds"))
    search = tools["search_memories"].input_schema["properties"]
    assert search["retrieval"]["enum"] == ["hybrid", "vector", "bm25", "fetch"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, 100)
    assert tools["delete_memory"].annotations.destructive_hint is True  # type: ignore[union-attr]


async def test_groups_and_topics_are_resources(tenant: Tenant, connect: Connect) -> None:
    async with connect(tenant.url, tenant.key) as client:
        listed = await client.list_resources()
        assert [r.uri for r in listed.resources] == ["mnemo://groups"]
        templates = await client.list_resource_templates()
        assert "mnemo://groups/{name}" in [t.uri_template for t in templates.resource_templates]

        groups = json.loads((await client.read_resource("mnemo://groups")).contents[0].text)  # type: ignore[union-attr]
        default = next(g for g in groups["groups"] if g["name"] == "default")
        topics = {t["topic_name"]: t for t in default["topics"]}
        assert topics["UserProfile"]["is_bounded"] is True
        assert topics["UserKnowledge"]["scoping"]["user_scoped"] is True
        assert topics["UserKnowledge"]["description"]
        assert await call(client, "list_groups") == groups

        config = json.loads(
            (await client.read_resource("mnemo://groups/default")).contents[0].text  # type: ignore[union-attr]
        )
        assert config["name"] == "default" and config["pipeline"]["steps"]
        with pytest.raises(MCPError, match=r"404: group 'no-such-group' does not exist"):
            await client.read_resource("mnemo://groups/no-such-group")
