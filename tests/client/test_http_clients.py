"""MnemoClient and AsyncMnemoClient round trips against a live gateway."""

from __future__ import annotations

import pytest

from mnemo.client import (
    AsyncMnemoClient,
    AuthenticationError,
    FetchRetrieval,
    MnemoClient,
    NotFoundError,
    PreExtractedInput,
    PreExtractedItem,
    RunTimeoutError,
    Topic,
    ValidationError,
    VectorRetrieval,
)
from mnemo.client.errors import ConflictError
from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration


def test_sync_round_trip(tenant: Tenant) -> None:
    with MnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        client.verify()
        added = client.memories.add(
            "I collect vinyl records", user_id=tenant.user, properties={"source": "chat"}
        )
        run = client.runs.wait(added.run_id, timeout=30)
        assert run.status == "completed" and run.committed_operations is not None
        memory_id = run.committed_operations.created[0].memory_id

        memory = client.memories.get(memory_id, user_id=tenant.user)
        assert memory.content == "User said: I collect vinyl records"
        found = client.memories.search(
            "vinyl records",
            user_id=tenant.user,
            properties={"source": "elsewhere"},  # UserKnowledge is not scoped by it
            topics=[Topic(name="UserKnowledge", properties={"source": None})],
            retrieval_config=VectorRetrieval(limit=5),
        )
        assert [m.id for m in found] == [memory_id] and found[0].score is not None
        assert client.memories.list(user_id=tenant.user).total == 1
        assert client.memories.history(memory_id, user_id=tenant.user) == []
        assert [g.name for g in client.groups.list()] == ["default"]
        assert client.groups.get("default").name == "default"
        with pytest.raises(ConflictError):
            client.runs.retry(run.run_id)

        client.memories.delete(memory_id, user_id=tenant.user)
        with pytest.raises(NotFoundError):
            client.memories.get(memory_id, user_id=tenant.user)
        assert client.users.erase(tenant.user) == 1  # the archived memory still counts


def test_sync_errors(tenant: Tenant) -> None:
    with MnemoClient(base_url=tenant.url, api_key="wrong") as client:
        with pytest.raises(AuthenticationError):
            client.verify()
    with MnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        with pytest.raises(ValidationError) as caught:
            client.memories.add("no user")
        assert caught.value.status == 400
        assert caught.value.errors[0]["location"] == "body.user_id"
        with pytest.raises(ValidationError):
            client.memories.add([], user_id="u")  # refused locally: no messages


def test_wait_timeout(tenant: Tenant, llm_server) -> None:
    llm_server.delay_seconds = 1.5
    try:
        with MnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
            added = client.memories.add("I am slow", user_id=tenant.user)
            with pytest.raises(RunTimeoutError):
                client.runs.wait(added.run_id, timeout=0.3)
            assert client.runs.wait(added.run_id, timeout=30).status == "completed"
    finally:
        llm_server.delay_seconds = 0.0


async def test_async_round_trip(tenant: Tenant) -> None:
    async with AsyncMnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        await client.verify()
        items = [PreExtractedItem(content="Bo, a pilot", topic="UserProfile")]
        added = await client.memories.add(PreExtractedInput(items=items), user_id=tenant.user)
        run = await client.runs.wait(added.run_id, timeout=30)
        assert run.status == "completed"
        found = await client.memories.search(
            "pilot", topics=["UserProfile"], user_id=tenant.user, retrieval_config=FetchRetrieval()
        )
        assert [m.content for m in found] == ["Bo, a pilot"]
        group = await client.groups.put("notes", {"template": "default"})
        assert group.template == "default"
        with pytest.raises(NotFoundError):
            await client.runs.get("missing")
