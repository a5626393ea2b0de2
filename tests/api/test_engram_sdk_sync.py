"""The official weaviate-engram SDK (sync client) against a live mnemo gateway."""

from __future__ import annotations

import httpx
import pytest
from engram import (
    APIError,
    AuthenticationError,
    BM25Retrieval,
    ConversationInput,
    EngramClient,
    FetchRetrieval,
    HybridRetrieval,
    MessageInput,
    PreExtractedInput,
    PreExtractedItem,
    StringInput,
    ToolCallFuncInput,
    ToolCallInput,
    Topic,
    VectorRetrieval,
)

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration


@pytest.fixture
def client(tenant: Tenant) -> EngramClient:
    with EngramClient(base_url=tenant.url, api_key=tenant.key) as engram:
        yield engram


def _created(client: EngramClient, run_id: str) -> list[str]:
    status = client.runs.wait(run_id, timeout=30, interval=0.1)
    assert status.status == "completed", status.error
    return [op.memory_id for op in status.memories_created]


def test_string_input_round_trip(client: EngramClient, tenant: Tenant) -> None:
    run = client.memories.add("I love hiking in the Alps", user_id=tenant.user)
    assert run.status == "running" and run.run_id

    status = client.runs.get(run.run_id)
    assert status.group_id == "default" and status.input_type == "string"
    assert isinstance(status.starting_step, int)
    (memory_id,) = _created(client, run.run_id)

    memory = client.memories.get(memory_id, user_id=tenant.user)
    assert memory.content == "User said: I love hiking in the Alps"
    assert memory.topic == "UserKnowledge" and memory.group == "default"
    assert memory.project_id == tenant.project and memory.user_id == tenant.user
    assert memory.created_at.endswith("Z") and memory.score is None


def test_string_input_object_with_timestamps(client: EngramClient, tenant: Tenant) -> None:
    data = StringInput(
        content=["I drink green tea", "I play chess"], created_at="2024-01-02T03:04:05Z"
    )
    run = client.memories.add(data, user_id=tenant.user, group=None)
    assert len(_created(client, run.run_id)) == 2


def test_conversation_with_tool_calls_and_roles(client: EngramClient, tenant: Tenant) -> None:
    conversation = ConversationInput(
        messages=[
            MessageInput(role="developer", content="Be concise."),
            MessageInput(role="user", content="I moved to Berlin last month"),
            MessageInput(
                role="assistant",
                content="",
                tool_calls=[
                    ToolCallInput(
                        id="call_1",
                        function=ToolCallFuncInput(name="weather", arguments='{"city": "Berlin"}'),
                    )
                ],
            ),
            MessageInput(role="tool", content="sunny", tool_call_id="call_1", name="weather"),
            MessageInput(role="system", content="stay friendly"),
        ],
        metadata={"channel": "chat"},
    )
    run = client.memories.add(conversation, user_id=tenant.user)
    status = client.runs.wait(run.run_id, timeout=30, interval=0.1)
    assert status.status == "completed" and status.input_type == "conversation"
    assert status.memories_created


def test_conversation_as_message_dicts(client: EngramClient, tenant: Tenant) -> None:
    run = client.memories.add(
        [{"role": "user", "content": "My cat is called Miso"}], user_id=tenant.user
    )
    assert _created(client, run.run_id)


def test_pre_extracted_and_fetch_bounded_profile(client: EngramClient, tenant: Tenant) -> None:
    items = [PreExtractedItem(content="Ana, a chemist from Porto", topic="UserProfile")]
    run = client.memories.add(PreExtractedInput(items=items), user_id=tenant.user)
    assert client.runs.wait(run.run_id, timeout=30, interval=0.1).status == "completed"

    results = client.memories.search(
        query="profile",
        topics=["UserProfile"],
        user_id=tenant.user,
        retrieval_config=FetchRetrieval(),
    )
    assert [m.content for m in results] == ["Ana, a chemist from Porto"]
    assert results.total == 1


@pytest.mark.parametrize(
    "retrieval",
    [VectorRetrieval(), BM25Retrieval(limit=5), HybridRetrieval(limit=None), "vector", "bm25"],
)
def test_search_each_retrieval_type(client: EngramClient, tenant: Tenant, retrieval) -> None:
    run = client.memories.add("I build compilers in Rust", user_id=tenant.user)
    _created(client, run.run_id)
    results = client.memories.search(
        query="Rust compilers", user_id=tenant.user, retrieval_config=retrieval
    )
    assert results.total == len(results) >= 1
    assert "Rust" in results[0].content and results[0].score is not None


def test_topic_selector_property_filters(client: EngramClient, tenant: Tenant) -> None:
    # personalization: ConversationSummary is scoped by conversation_id, UserKnowledge is not.
    made = httpx.put(
        f"{tenant.url}/v1/groups/chat",
        headers={"Authorization": f"Bearer {tenant.key}"},
        json={"template": "personalization"},
    )
    assert made.status_code == 200, made.text
    for conversation in ("c1", "c2"):
        items = [
            PreExtractedItem(
                content=f"Planning a trip in {conversation}", topic="ConversationSummary"
            )
        ]
        run = client.memories.add(
            PreExtractedInput(items=items),
            user_id=tenant.user,
            group="chat",
            properties={"conversation_id": conversation, "source": "travel"},
        )
        _created(client, run.run_id)
    hits = client.memories.search(
        query="planning a trip",
        user_id=tenant.user,
        group="chat",
        topics=[Topic(name="ConversationSummary", properties={"conversation_id": "c1"})],
    )
    assert [m.properties for m in hits] == [{"conversation_id": "c1"}]
    cleared = client.memories.search(
        query="planning a trip",
        user_id=tenant.user,
        group="chat",
        properties={"conversation_id": "c2"},
        topics=[Topic(name="ConversationSummary", properties={"conversation_id": None})],
    )
    assert len(cleared) == 2
    with pytest.raises(APIError) as refused:
        client.memories.search(
            query="planning a trip",
            user_id=tenant.user,
            group="chat",
            topics=[Topic(name="UserKnowledge", properties={"conversation_id": "c1"})],
        )
    assert refused.value.status_code == 400


def test_delete_then_get_is_404(client: EngramClient, tenant: Tenant) -> None:
    run = client.memories.add("I am allergic to peanuts", user_id=tenant.user)
    (memory_id,) = _created(client, run.run_id)
    client.memories.delete(memory_id, user_id=tenant.user)
    with pytest.raises(APIError) as caught:
        client.memories.get(memory_id, user_id=tenant.user)
    assert caught.value.status_code == 404
    assert caught.value.body["status"] == 404


def test_bad_key_raises_authentication_error(tenant: Tenant) -> None:
    with EngramClient(base_url=tenant.url, api_key="mnemo_wrong") as engram:
        with pytest.raises(AuthenticationError):
            engram.memories.search(query="anything", user_id="u")


@pytest.mark.parametrize(
    ("body_input", "status"),
    [
        (ConversationInput(messages=[]), 422),
        ("needs a user", 400),
    ],
)
def test_invalid_input_is_api_error(client: EngramClient, body_input, status: int) -> None:
    with pytest.raises(APIError) as caught:
        client.memories.add(body_input)
    assert caught.value.status_code == status
    assert caught.value.body["errors"]


def test_unknown_group_and_topic(client: EngramClient, tenant: Tenant) -> None:
    with pytest.raises(APIError) as caught:
        client.memories.search(query="x", user_id=tenant.user, group="nope")
    assert caught.value.status_code == 422  # as Engram answers
    with pytest.raises(APIError) as caught:
        client.memories.search(query="x", user_id=tenant.user, topics=["NoSuchTopic"])
    assert caught.value.status_code == 422  # as Engram answers
    assert caught.value.body["errors"][0]["location"] == "body.topics[0]"
