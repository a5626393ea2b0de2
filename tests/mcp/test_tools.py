"""The MCP tools over both transports (Streamable HTTP at /mcp, stdio via `mnemo mcp`)."""

from __future__ import annotations

import pytest

from tests.api.fixtures import Tenant
from tests.mcp.conftest import Connect
from tests.mcp.tools import call, locations, refusal

pytestmark = pytest.mark.integration
WAIT = 30


async def test_add_waits_then_every_retrieval_finds_it(tenant: Tenant, connect: Connect) -> None:
    async with connect(tenant.url, tenant.key) as client:
        run = await call(
            client, "add_memory", text="I climb volcanoes", user_id=tenant.user, wait_seconds=WAIT
        )
        assert run["status"] == "completed" and run["input_type"] == "string"
        created = run["committed_operations"]["created"]
        assert len(created) == 1
        for retrieval in ("hybrid", "vector", "bm25"):
            found = await call(
                client, "search_memories", query="volcanoes", retrieval=retrieval,
                user_id=tenant.user,
            )  # fmt: skip
            assert [m["id"] for m in found["memories"]] == [created[0]["memory_id"]], retrieval
            memory = found["memories"][0]
            assert memory["content"] == "User said: I climb volcanoes"
            assert 0 <= memory["score"] <= 1 and memory["created_at"].endswith("Z")


async def test_fetch_reads_a_bounded_topic_without_a_query(
    tenant: Tenant, connect: Connect
) -> None:
    async with connect(tenant.url, tenant.key) as client:
        run = await call(
            client, "add_memory", user_id=tenant.user, wait_seconds=WAIT,
            items=[{"content": "User is Ana, a glider pilot.", "topic": "UserProfile"}],
        )  # fmt: skip
        assert run["status"] == "completed" and run["input_type"] == "pre_extracted"
        fetched = await call(
            client, "search_memories", retrieval="fetch", topics=["UserProfile"],
            user_id=tenant.user,
        )  # fmt: skip
        assert [m["content"] for m in fetched["memories"]] == ["User is Ana, a glider pilot."]


async def test_add_returns_at_once_and_run_status_waits(tenant: Tenant, connect: Connect) -> None:
    messages = [
        {"role": "user", "content": "I keep bees"},
        {"role": "assistant", "content": "Noted!"},
    ]
    async with connect(tenant.url, tenant.key) as client:
        run = await call(client, "add_memory", messages=messages, user_id=tenant.user)
        assert run["input_type"] == "conversation" and run["status"] in ("running", "completed")
        done = await call(client, "run_status", run_id=run["run_id"], wait_seconds=WAIT)
        assert done["status"] == "completed"
        page = await call(client, "list_memories", user_id=tenant.user)
        assert [m["content"] for m in page["memories"]] == ["User said: I keep bees"]


async def test_list_pages_get_history_and_delete(tenant: Tenant, connect: Connect) -> None:
    texts = ["I sail dinghies", "I brew cider", "I collect maps"]
    async with connect(tenant.url, tenant.key) as client:
        await call(client, "add_memory", text=texts, user_id=tenant.user, wait_seconds=WAIT)
        first = await call(client, "list_memories", user_id=tenant.user, limit=2)
        assert (len(first["memories"]), first["total"], first["next_offset"]) == (2, 3, 2)
        rest = await call(client, "list_memories", user_id=tenant.user, limit=2, offset=2)
        assert (len(rest["memories"]), rest["next_offset"]) == (1, None)
        ids = [m["id"] for m in first["memories"] + rest["memories"]]
        assert len(set(ids)) == 3
        contents = {m["content"] for m in first["memories"] + rest["memories"]}
        assert contents == {f"User said: {t}" for t in texts}

        kept, erased = ids[0], ids[1]
        memory = await call(client, "get_memory", memory_id=kept, user_id=tenant.user)
        assert memory["id"] == kept
        deleted = await call(client, "delete_memory", memory_id=kept, user_id=tenant.user)
        assert deleted == {"memory_id": kept, "erased": False}
        gone = await refusal(client, "get_memory", memory_id=kept, user_id=tenant.user)
        assert gone["status"] == 404
        history = await call(client, "memory_history", memory_id=kept, user_id=tenant.user)
        assert [(v["change"], v["content"]) for v in history["versions"]] == [
            ("deleted", memory["content"])
        ]
        await call(client, "delete_memory", memory_id=erased, user_id=tenant.user, erase=True)
        problem = await refusal(client, "memory_history", memory_id=erased, user_id=tenant.user)
        assert problem["status"] == 404
        left = await call(client, "list_memories", user_id=tenant.user)
        assert left["total"] == 1


async def test_a_key_reaches_only_its_project(
    tenant: Tenant, live_server, connect: Connect
) -> None:
    other_key = live_server.create_key(f"{tenant.project}-other")
    async with connect(tenant.url, tenant.key) as owner:
        run = await call(
            owner, "add_memory", text="My locker code is 4711", user_id=tenant.user,
            wait_seconds=WAIT,
        )  # fmt: skip
    memory_id = run["committed_operations"]["created"][0]["memory_id"]
    async with connect(tenant.url, other_key) as stranger:
        found = await call(stranger, "search_memories", query="locker code", user_id=tenant.user)
        assert found["memories"] == []
        listed = await call(stranger, "list_memories", user_id=tenant.user)
        assert listed["total"] == 0
        # The other project has never seen the user: Engram's 422 names that, and nothing
        # about this project. Once it knows a user of that name, the memory is a 404.
        unknown = await refusal(stranger, "get_memory", memory_id=memory_id, user_id=tenant.user)
        assert (unknown["status"], locations(unknown)) == (422, ["arguments.user_id"])
        await call(stranger, "add_memory", text="I like tea", user_id=tenant.user,
                   wait_seconds=WAIT)  # fmt: skip
        for tool, args in (
            ("get_memory", {"memory_id": memory_id, "user_id": tenant.user}),
            ("memory_history", {"memory_id": memory_id, "user_id": tenant.user}),
            ("delete_memory", {"memory_id": memory_id, "user_id": tenant.user}),
            ("run_status", {"run_id": run["run_id"]}),
        ):
            assert (await refusal(stranger, tool, **args))["status"] == 404, tool
    async with connect(tenant.url, tenant.key) as owner:  # the stranger deleted nothing
        memory = await call(owner, "get_memory", memory_id=memory_id, user_id=tenant.user)
        assert memory["content"] == "User said: My locker code is 4711"


async def test_users_are_isolated(tenant: Tenant, connect: Connect) -> None:
    async with connect(tenant.url, tenant.key) as client:
        run = await call(
            client, "add_memory", text="I am allergic to hazelnuts", user_id=tenant.user,
            wait_seconds=WAIT,
        )  # fmt: skip
        memory_id = run["committed_operations"]["created"][0]["memory_id"]
        found = await call(client, "search_memories", query="hazelnuts", user_id="someone-else")
        assert found["memories"] == []
        # A user the project has never seen: Engram's 422 on get and delete.
        for tool in ("get_memory", "delete_memory"):
            unknown = await refusal(client, tool, memory_id=memory_id, user_id="someone-else")
            assert (unknown["status"], locations(unknown)) == (422, ["arguments.user_id"])
        # Another user the project knows: 404, as for a missing memory (nothing leaks).
        await call(client, "add_memory", text="I like tea", user_id="someone-else",
                   wait_seconds=WAIT)  # fmt: skip
        for user in ("someone-else", None):
            args = {"memory_id": memory_id} | ({"user_id": user} if user else {})
            assert (await refusal(client, "get_memory", **args))["status"] == 404
            assert (await refusal(client, "delete_memory", **args))["status"] == 404
        mine = await call(client, "search_memories", query="hazelnuts", user_id=tenant.user.upper())
        assert [m["id"] for m in mine["memories"]] == [memory_id]


BAD_CALLS = [
    ("add_memory", {"user_id": "u"}, 422, ["arguments"]),
    ("add_memory", {"text": "a", "messages": [{"role": "user", "content": "b"}]}, 422, ["arguments"]),
    ("add_memory", {"text": "I like tea"}, 400, ["arguments.user_id"]),
    ("add_memory", {"text": "x", "user_id": "u", "group": "nope"}, 422, ["arguments.group"]),
    ("add_memory", {"messages": [{"role": "robot", "content": "hi"}], "user_id": "u"}, 422,
     ["arguments.messages[0].role"]),
    ("add_memory", {"items": [{"content": "c", "topic": "Nope"}], "user_id": "u"}, 400,
     ["arguments.items[0].topic"]),
    ("add_memory", {"text": "x", "user_id": "u", "wait_seconds": 61}, 422,
     ["arguments.wait_seconds"]),
    ("search_memories", {"query": "q", "retrieval": "nope"}, 422, ["arguments.retrieval"]),
    ("search_memories", {"query": "q", "limit": 0}, 422, ["arguments.limit"]),
    ("search_memories", {"query": "q", "topics": ["Nope"]}, 422, ["arguments.topics[0]"]),
    ("search_memories", {"user_id": "u"}, 422, ["arguments.query"]),
    ("list_memories", {"offset": -1}, 422, ["arguments.offset"]),
    ("get_memory", {"memory_id": "a\x00b"}, 422, ["arguments.memory_id"]),
    ("run_status", {"run_id": "no-such-run"}, 404, []),
]  # fmt: skip


async def test_bad_arguments_are_tool_errors_naming_them(tenant: Tenant, connect: Connect) -> None:
    async with connect(tenant.url, tenant.key) as client:
        for tool, args, status, where in BAD_CALLS:
            problem = await refusal(client, tool, **args)
            assert (problem["status"], locations(problem)) == (status, where), (tool, args)
            assert problem["detail"] and problem["title"]
        assert (await call(client, "list_memories", user_id="u"))["total"] == 0  # still serving
