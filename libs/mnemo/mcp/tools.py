"""The MCP tools and their hints: add, search, list, get, history, delete, run status, groups.

Each tool calls the bound client (`binding.current_client`), so the gateway and the stdio
proxy behave the same; refusals raise the client's typed errors, which the server returns
as RFC 7807 tool errors (`mnemo.mcp.problems`).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from mnemo.mcp.reads import get_memory, list_groups, list_memories, memory_history, search_memories
from mnemo.mcp.writes import add_memory, delete_memory, run_status

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# Adds only add: reconciliation may rewrite a memory, but history keeps every version.
ADDITIVE = ToolAnnotations(destructive_hint=False, idempotent_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(destructive_hint=True, idempotent_hint=True, open_world_hint=False)


def register_tools(server: MCPServer) -> None:
    server.add_tool(add_memory, annotations=ADDITIVE)
    server.add_tool(search_memories, annotations=READ_ONLY)
    server.add_tool(list_memories, annotations=READ_ONLY)
    server.add_tool(get_memory, annotations=READ_ONLY)
    server.add_tool(memory_history, annotations=READ_ONLY)
    server.add_tool(delete_memory, annotations=DESTRUCTIVE)
    server.add_tool(run_status, annotations=READ_ONLY)
    server.add_tool(list_groups, annotations=READ_ONLY)
