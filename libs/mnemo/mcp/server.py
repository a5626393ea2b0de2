"""The mnemo MCP server: tools, resources and prompts on the SDK's `MCPServer`, errors as
problems."""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from mnemo.mcp.binding import ClientResolver, bind_client
from mnemo.mcp.problems import error_result, invalid_arguments, problem_for
from mnemo.mcp.prompts import register_prompts
from mnemo.mcp.resources import register_resources
from mnemo.mcp.tools import register_tools

INSTRUCTIONS = """\
mnemo is a long-term memory service. Memories live in groups; each group has topics (what
to remember) and a pipeline that extracts, reconciles and commits memories.
- Read mnemo://groups or call list_groups to see the groups and what each topic holds;
  mnemo://groups/{group}/memories?user_id=... holds a scope's newest memories.
- add_memory is asynchronous: it returns a run at once; pass wait_seconds to wait for it
  (or call run_status) before searching for what it stored.
- Pass the same user_id to add and search a user's memories: user-scoped topics are
  isolated per user and invisible without it.
- search_memories finds memories by meaning and keywords; list_memories pages through them.
- A refused call returns an error naming the argument to fix (RFC 7807 JSON).
"""


class MnemoMCPServer(MCPServer[Any]):
    """`MCPServer` whose refused tool calls come back as RFC 7807 tool errors.

    The SDK turns a tool's exception into an error result with the exception's text; here
    refusals (bad arguments, the engine's or the server's 4xx, an unreachable server) carry
    the problem document instead. Anything else stays the SDK's generic error (and log).
    """

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
                return error_result(invalid_arguments(cause))
            problem = problem_for(cause)
            if problem is None:
                raise
            return error_result(problem)


def build_server(resolve_client: ClientResolver) -> MnemoMCPServer:
    """The server, with `resolve_client(ctx)` choosing the client of each request."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server = MnemoMCPServer(
        name="mnemo",
        title="mnemo memory",
        instructions=INSTRUCTIONS,
        version=_mnemo_version(),
        middleware=[bind_client(resolve_client)],
        log_level="WARNING",
    )
    # MCPServer() calls logging.basicConfig; logging belongs to the process hosting it.
    root.handlers[:], root.level = handlers, level
    register_tools(server)
    register_resources(server)
    register_prompts(server)
    return server


def _mnemo_version() -> str:
    try:
        return version("mnemo")
    except PackageNotFoundError:
        return "0+unknown"
