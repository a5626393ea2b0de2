"""Calling mnemo's MCP tools in tests: results as JSON, refusals as problem documents."""

from __future__ import annotations

import json
from typing import Any

from mcp.client import Client

# A raw `initialize` over Streamable HTTP, for tests below the MCP client library.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """The tool's structured result; fails the test on a tool error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def refusal(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """The RFC 7807 problem of a call that must be refused."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    problem: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return problem


def locations(problem: dict[str, Any]) -> list[str]:
    return [e["location"] for e in problem.get("errors", [])]
