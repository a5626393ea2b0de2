"""The MCP server in-process, on a hand-written fake client: errors never escape as crashes."""

from __future__ import annotations

import json
from typing import Any

from mcp.client import Client

from mnemo.client.errors import NotFoundError
from mnemo.mcp.server import build_server


class _Memories:
    async def list(self, **_: Any) -> Any:
        raise RuntimeError("secret internal detail")

    async def get(self, memory_id: str, **_: Any) -> Any:
        raise NotFoundError(404, {"detail": f"memory '{memory_id}' not found"})


class FakeClient:
    memories = _Memories()


async def test_a_crash_is_a_generic_tool_error_and_the_server_goes_on() -> None:
    server = build_server(lambda _ctx: FakeClient())  # type: ignore[arg-type, return-value]
    async with Client(server) as client:
        crashed = await client.call_tool("list_memories", {"user_id": "u"})
        assert crashed.is_error
        text = crashed.content[0].text  # type: ignore[union-attr]
        assert "list_memories" in text and "secret internal detail" not in text

        missing = await client.call_tool("get_memory", {"memory_id": "m-1"})
        assert missing.is_error
        problem = json.loads(missing.content[0].text)  # type: ignore[union-attr]
        assert (problem["status"], problem["detail"]) == (404, "memory 'm-1' not found")
