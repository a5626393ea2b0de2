"""`mnemo mcp` (stdio): a server that is down or a refused key come back as tool errors."""

from __future__ import annotations

import socket

import pytest

from tests.api.fixtures import Tenant
from tests.mcp.conftest import stdio_client
from tests.mcp.tools import refusal

pytestmark = pytest.mark.integration


async def test_a_refused_key_is_a_tool_error(tenant: Tenant) -> None:
    async with stdio_client(tenant.url, "mnemo_not-a-key") as client:
        problem = await refusal(client, "list_memories", user_id=tenant.user)
        assert problem["status"] == 401 and "invalid or revoked" in problem["detail"]


async def test_an_unreachable_server_is_a_tool_error(tenant: Tenant) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    async with stdio_client(url, tenant.key) as client:
        problem = await refusal(client, "search_memories", query="anything", user_id="u")
        assert problem["status"] == 503 and "cannot reach" in problem["detail"]
        assert len((await client.list_tools()).tools) == 8  # still serving
