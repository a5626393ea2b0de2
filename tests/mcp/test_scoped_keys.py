"""Scoped keys through the MCP tools (issue 40), over Streamable HTTP (checked by the
gateway's tools) and stdio (`mnemo mcp` calling the REST API with the key): a read-only
key's write tools are refused with 403 problems; a user-bound key's tools see only its
user."""

from __future__ import annotations

import pytest

from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer
from tests.mcp.conftest import Connect
from tests.mcp.tools import call, refusal

pytestmark = pytest.mark.integration
WAIT = 30


async def _seed(connect: Connect, tenant: Tenant) -> dict[str, str]:
    ids = {}
    async with connect(tenant.url, tenant.key) as client:
        for user, text in (("ana", "Ana keeps bees"), ("bob", "Bob restores clocks")):
            run = await call(client, "add_memory", text=text, user_id=user, wait_seconds=WAIT)
            ids[user] = run["committed_operations"]["created"][0]["memory_id"]
            ids[f"{user}_run"] = run["run_id"]
    return ids


async def test_a_read_only_key_cannot_use_write_tools(
    tenant: Tenant, live_server: LiveServer, connect: Connect
) -> None:
    ids = await _seed(connect, tenant)
    key = live_server.create_key(tenant.project, writable=False)
    async with connect(tenant.url, key) as client:
        added = await refusal(client, "add_memory", text="Ana owns a boat", user_id="ana")
        deleted = await refusal(client, "delete_memory", memory_id=ids["ana"], user_id="ana")
        for problem in (added, deleted):
            assert problem["status"] == 403 and "read-only" in problem["detail"]
        found = await call(client, "search_memories", query="bees", user_id="ana")
        assert [m["id"] for m in found["memories"]] == [ids["ana"]]
        run = await call(client, "run_status", run_id=ids["bob_run"])
        assert run["status"] == "completed"
    async with connect(tenant.url, tenant.key) as client:
        page = await call(client, "list_memories", user_id="ana")
        assert [m["id"] for m in page["memories"]] == [ids["ana"]]  # nothing added or deleted


async def test_a_user_bound_key_sees_only_its_user(
    tenant: Tenant, live_server: LiveServer, connect: Connect
) -> None:
    ids = await _seed(connect, tenant)
    key = live_server.create_key(tenant.project, user_id="ana")
    async with connect(tenant.url, key) as client:
        page = await call(client, "list_memories")
        assert [m["id"] for m in page["memories"]] == [ids["ana"]]
        found = await call(client, "search_memories", query="clocks bees")
        assert [m["id"] for m in found["memories"]] == [ids["ana"]]
        assert (await refusal(client, "list_memories", user_id="bob"))["status"] == 403
        assert (await refusal(client, "search_memories", query="x", user_id="bob"))["status"] == 403
        assert (await refusal(client, "get_memory", memory_id=ids["bob"]))["status"] == 404
        assert (await refusal(client, "memory_history", memory_id=ids["bob"]))["status"] == 404
        assert (await refusal(client, "run_status", run_id=ids["bob_run"]))["status"] == 404
        assert (await refusal(client, "delete_memory", memory_id=ids["bob"]))["status"] == 404
        added = await refusal(client, "add_memory", text="Bob is away", user_id="bob")
        assert added["status"] == 403
        run = await call(client, "add_memory", text="Ana learns Welsh", wait_seconds=WAIT)
        assert run["status"] == "completed" and run["user_id"] == "ana"
    async with connect(tenant.url, tenant.key) as client:
        bob = await call(client, "list_memories", user_id="bob")
        assert [m["id"] for m in bob["memories"]] == [ids["bob"]]
