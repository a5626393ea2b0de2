"""MnemoClient and AsyncMnemoClient round trips against a live gateway."""

from __future__ import annotations

import time
from datetime import UTC, datetime

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


def _between_commits() -> datetime:
    time.sleep(0.01)
    return datetime.now(UTC)


def test_sync_provenance_and_as_of(tenant: Tenant) -> None:
    with MnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        item = PreExtractedItem(content="Bo flies gliders", topic="UserProfile")
        first = client.runs.wait(
            client.memories.add(PreExtractedInput(items=[item]), user_id=tenant.user).run_id
        )
        then = _between_commits()
        item = PreExtractedItem(content="Bo flies jets", topic="UserProfile")
        second = client.runs.wait(
            client.memories.add(PreExtractedInput(items=[item]), user_id=tenant.user).run_id
        )
        assert first.committed_operations is not None
        memory_id = first.committed_operations.created[0].memory_id
        provenance = client.memories.provenance(memory_id, user_id=tenant.user)
        assert [(v.operation, v.run_id) for v in provenance.versions] == [
            ("created", first.run_id), ("updated", second.run_id),
        ]  # fmt: skip
        old = client.memories.search("gliders", user_id=tenant.user, as_of=then)
        assert [m.content for m in old] == ["Bo flies gliders"]
        assert [m.content for m in client.memories.list(user_id=tenant.user, as_of=then)] == [
            "Bo flies gliders"
        ]
        assert [m.content for m in client.memories.list(user_id=tenant.user)] == ["Bo flies jets"]


async def test_async_provenance_and_as_of(tenant: Tenant) -> None:
    async with AsyncMnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        before = _between_commits()
        added = await client.memories.add("I sail dinghies", user_id=tenant.user)
        run = await client.runs.wait(added.run_id, timeout=30)
        assert run.committed_operations is not None
        memory_id = run.committed_operations.created[0].memory_id
        provenance = await client.memories.provenance(memory_id, user_id=tenant.user)
        assert provenance.run_ids == [run.run_id]
        assert provenance.versions[0].run is not None
        assert provenance.versions[0].run.raw_input_state == "retained"
        assert len(await client.memories.search("dinghies", user_id=tenant.user, as_of=before)) == 0
        assert (await client.memories.list(user_id=tenant.user, as_of=before)).total == 0
        with pytest.raises(NotFoundError):
            await client.memories.provenance(memory_id, user_id="someone-else")
