"""MnemoStore, LangGraph's BaseStore over mnemo, against a live gateway.

LangGraph ships no reusable store conformance suite (langgraph-checkpoint-conformance covers
checkpointers only), so these tests check BaseStore's documented contract one behaviour at
a time, then run the store inside a real compiled LangGraph graph."""

from __future__ import annotations

import uuid
from typing import Any, TypedDict

import pytest

from mnemo.client.aio import AsyncMnemoClient
from tests.integrations.conftest import EXTRA_MISSING, Tenant

pytest.importorskip("langgraph.store.base", reason=EXTRA_MISSING)

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import InvalidNamespaceError

from mnemo.integrations.langgraph_store import MnemoStore, user_for


@pytest.fixture
def store(client: AsyncMnemoClient) -> MnemoStore:
    return MnemoStore(client)


def ns(*labels: str) -> tuple[str, ...]:
    return ("memories", *labels, uuid.uuid4().hex[:6])


async def test_put_then_get_returns_the_item_as_given(store: MnemoStore) -> None:
    namespace = ns("ada")
    value = {"text": "prefers tea", "tags": ["drinks"], "nested": {"n": 1}}
    await store.aput(namespace, "pref-1", value)
    item = await store.aget(namespace, "pref-1")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (namespace, "pref-1", value)
    assert item.created_at <= item.updated_at
    assert await store.aget(namespace, "pref-2") is None


async def test_a_second_put_replaces_the_value_and_keeps_the_creation_time(
    store: MnemoStore,
) -> None:
    namespace = ns("ada")
    await store.aput(namespace, "k", {"v": 1})
    first = await store.aget(namespace, "k")
    await store.aput(namespace, "k", {"v": 2})
    second = await store.aget(namespace, "k")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at
    assert second.updated_at >= first.updated_at


async def test_delete_then_put_again(store: MnemoStore) -> None:
    namespace = ns("ada")
    await store.aput(namespace, "k", {"v": 1})
    await store.adelete(namespace, "k")
    assert await store.aget(namespace, "k") is None
    await store.adelete(namespace, "k")  # deleting what is gone is done
    await store.aput(namespace, "k", {"v": 3})
    item = await store.aget(namespace, "k")
    assert item is not None and item.value == {"v": 3}


async def test_namespaces_are_kept_apart_exactly(store: MnemoStore) -> None:
    tail = uuid.uuid4().hex[:6]
    upper, lower = ("users", "Ada", tail), ("users", "ada", tail)
    await store.aput(upper, "k", {"who": "Ada"})
    await store.aput(lower, "k", {"who": "ada"})
    got_upper, got_lower = await store.aget(upper, "k"), await store.aget(lower, "k")
    assert got_upper is not None and got_upper.value == {"who": "Ada"}
    assert got_lower is not None and got_lower.value == {"who": "ada"}
    assert [i.key for i in await store.asearch(("users", "Ada", tail, "x"))] == []
    assert user_for(upper) != user_for(lower)
    with pytest.raises(InvalidNamespaceError):
        user_for(())


async def test_search_ranks_by_query_and_filters_pages(store: MnemoStore) -> None:
    namespace = ns("ada")
    facts = {
        "a": {"text": "Ada plays the violin in an orchestra", "kind": "hobby"},
        "b": {"text": "Ada is allergic to peanuts", "kind": "health"},
        "c": {"text": "Ada grows tomatoes on her balcony", "kind": "hobby"},
    }
    for key, value in facts.items():
        await store.aput(namespace, key, value)

    ranked = await store.asearch(namespace, query="violin orchestra")
    assert ranked[0].key == "a"
    assert all(item.score is not None for item in ranked)
    assert ranked == sorted(ranked, key=lambda item: -(item.score or 0))

    hobbies = await store.asearch(namespace, filter={"kind": "hobby"})
    assert sorted(i.key for i in hobbies) == ["a", "c"]
    listed = await store.asearch(namespace, limit=2)
    rest = await store.asearch(namespace, limit=2, offset=2)
    assert len(listed) == 2 and len(rest) == 1
    assert sorted(i.key for i in [*listed, *rest]) == ["a", "b", "c"]


async def test_what_the_store_cannot_do_is_refused_with_a_reason(store: MnemoStore) -> None:
    with pytest.raises(NotImplementedError, match="async"):
        store.get(ns("ada"), "k")
    with pytest.raises(NotImplementedError, match="namespaces"):
        await store.alist_namespaces()


async def test_a_langgraph_graph_keeps_long_term_memory_in_the_store(
    store: MnemoStore, client: AsyncMnemoClient, tenant: Tenant
) -> None:
    class State(TypedDict):
        user: str
        note: str
        recalled: list[str]

    async def write(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        await runtime.store.aput(("notes", state["user"]), "latest", {"text": state["note"]})
        return {}

    async def read(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        found = await runtime.store.asearch(("notes", state["user"]), query="birthday")
        return {"recalled": [item.value["text"] for item in found]}

    builder = StateGraph(State)
    builder.add_node("write", write)
    builder.add_node("read", read)
    builder.add_edge(START, "write")
    builder.add_edge("write", "read")
    builder.add_edge("read", END)
    graph = builder.compile(store=store)

    user = f"u-{uuid.uuid4().hex[:6]}"
    out = await graph.ainvoke({"user": user, "note": "Ada's birthday is on 10 December"})
    assert out["recalled"] == ["Ada's birthday is on 10 December"]

    # The item is a mnemo memory of the store's group, under the namespace's user.
    memories = await client.memories.list(user_id=user_for(("notes", user)), group="langgraph")
    assert len(memories) == 1 and "10 December" in memories[0].content
