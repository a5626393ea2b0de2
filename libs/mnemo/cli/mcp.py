"""`mnemo mcp`: serve the MCP tools over stdio, proxied to a running server (register
`mcp_command`). The MCP SDK is imported when the command runs."""

from __future__ import annotations

from mnemo.cli.common import DEFAULT_URL, ApiKeyOption, UrlOption


def mcp_command(url: UrlOption = DEFAULT_URL, api_key: ApiKeyOption = None) -> None:
    """MCP over stdio for clients that launch a command (Claude Desktop, Cursor, ...).

    Proxies to the mnemo server at --url with --api-key (or MNEMO_URL / MNEMO_API_KEY);
    stdout carries the protocol, logs go to stderr.
    """
    import asyncio

    from mnemo.mcp.stdio import serve_stdio

    asyncio.run(serve_stdio(url, api_key))
