"""`mnemo mcp`: the MCP tools over stdio, proxied to a running mnemo over HTTP.

For MCP clients that launch a command. Every tool call becomes REST calls through
`AsyncMnemoClient`, with the server deciding (the key's project, validation, isolation);
a server that is down or a refused key comes back as a tool error, not a crash.
"""

from __future__ import annotations

import logging
import sys

from mnemo.client.aio import AsyncMnemoClient
from mnemo.client.errors import MnemoError
from mnemo.mcp.server import build_server

log = logging.getLogger("mnemo.mcp")


async def serve_stdio(url: str, api_key: str | None) -> None:
    """Serve MCP on stdin/stdout until the client closes them. Logs go to stderr."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="mnemo mcp: %(message)s")
    async with AsyncMnemoClient(base_url=url, api_key=api_key) as client:
        try:
            await client.verify()
        except MnemoError as exc:  # keep serving: each tool call reports the problem
            log.warning("%s: %s (tool calls will fail until this is fixed)", url, exc)
        server = build_server(lambda _ctx: client)
        await server.run_stdio_async()
