"""The official weaviate-engram SDK (async client) against a live mnemo gateway."""

from __future__ import annotations

import pytest
from engram import (
    APIError,
    AsyncEngramClient,
    AuthenticationError,
    BM25Retrieval,
    ConversationInput,
    FetchRetrieval,
    HybridRetrieval,
    MessageInput,
    PreExtractedInput,
    PreExtractedItem,
    ToolCallCustomInput,
    ToolCallInput,
    Topic,
    VectorRetrieval,
)

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration


async def test_every_call(tenant: Tenant) -> None:
    async with AsyncEngramClient(base_url=tenant.url, api_key=tenant.key) as client:
        text_run = await client.memories.add("I teach yoga on Sundays", user_id=tenant.user)
        convo_run = await client.memories.add(
            ConversationInput(
                messages=[
                    MessageInput(role="user", content="I speak Portuguese"),
                    MessageInput(
                        role="assistant",
                        content="",
                        tool_calls=[
                            ToolCallInput(
                                id="c1",
                                type="custom",
                                custom=ToolCallCustomInput(name="n", input="i"),
                            )
                        ],
                    ),
                    MessageInput(role="tool", content="ok", tool_call_id="c1"),
                ]
            ),
            user_id=tenant.user,
        )
        profile_run = await client.memories.add(
            PreExtractedInput(
                items=[PreExtractedItem(content="Yoga teacher", topic="UserProfile")]
            ),
            user_id=tenant.user,
        )
        for run in (text_run, convo_run, profile_run):
            status = await client.runs.wait(run.run_id, timeout=30, interval=0.1)
            assert status.status == "completed", status.error
        assert (await client.runs.get(text_run.run_id)).memories_created

        for retrieval in (VectorRetrieval(), BM25Retrieval(), HybridRetrieval(limit=3)):
            found = await client.memories.search(
                query="yoga Sundays", user_id=tenant.user, retrieval_config=retrieval
            )
            assert any("yoga" in m.content for m in found)
        fetched = await client.memories.search(
            query="*",
            topics=[Topic(name="UserProfile")],
            user_id=tenant.user,
            retrieval_config=FetchRetrieval(limit=10),
        )
        assert [m.content for m in fetched] == ["Yoga teacher"]

        memory_id = (await client.runs.get(text_run.run_id)).memories_created[0].memory_id
        memory = await client.memories.get(memory_id, user_id=tenant.user.upper())
        assert memory.id == memory_id
        await client.memories.delete(memory_id, user_id=tenant.user)
        with pytest.raises(APIError) as caught:
            await client.memories.get(memory_id, user_id=tenant.user)
        assert caught.value.status_code == 404

        with pytest.raises(APIError) as caught:
            await client.memories.add(ConversationInput(messages=[]), user_id=tenant.user)
        assert caught.value.status_code == 422


async def test_async_bad_key(tenant: Tenant) -> None:
    async with AsyncEngramClient(base_url=tenant.url, api_key="bad") as client:
        with pytest.raises(AuthenticationError):
            await client.runs.get("00000000-0000-0000-0000-000000000000")
