"""MCP resources: the project's groups and their topics, so an agent knows what to store where."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from mnemo.api.schemas import GroupList
from mnemo.client.errors import MnemoError
from mnemo.mcp.binding import current_client

JSON = "application/json"


async def groups() -> str:
    """Every group of the project with its topics: name, description, user scoping, scope
    properties and whether the topic keeps one memory per scope (bounded)."""
    async with _reported():
        found = await current_client().groups.list()
    return GroupList(groups=found).model_dump_json()


async def group(name: str) -> str:
    """One group's full configuration: description, topics and the pipeline that maintains
    them (extraction, buffering, reconciliation, commit)."""
    async with _reported():
        config = await current_client().groups.get(name)
    return config.model_dump_json(exclude_none=True)


@asynccontextmanager
async def _reported() -> AsyncIterator[None]:
    """Client errors become resource errors the caller reads (not an internal error)."""
    try:
        yield
    except MnemoError as exc:
        raise ResourceError(str(exc)) from exc


def register_resources(server: MCPServer) -> None:
    server.resource("mnemo://groups", name="groups", title="Groups and topics", mime_type=JSON)(
        groups
    )
    server.resource(
        "mnemo://groups/{name}", name="group", title="A group's configuration", mime_type=JSON
    )(group)
