"""EmbeddedClient: the same API with the Engine in-process, no server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mnemo.client import (
    BM25Retrieval,
    EmbeddedClient,
    NotFoundError,
    PreExtractedInput,
    PreExtractedItem,
    ValidationError,
)
from mnemo.embeddings.hashing import HashEmbedder
from tests.api.live_server import gateway_settings, scripted_llm

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
async def embedded(postgres, llm_server, tmp_path_factory) -> AsyncIterator[EmbeddedClient]:
    settings = gateway_settings(
        postgres.new_database("embedded"), Path(tmp_path_factory.mktemp("embedded"))
    )
    client = await EmbeddedClient.start(
        settings, llm=scripted_llm(llm_server), embedder=HashEmbedder(384)
    )
    yield client
    await client.close()


async def test_embedded_round_trip(embedded: EmbeddedClient) -> None:
    user = f"u-{uuid.uuid4().hex[:6]}"
    added = await embedded.memories.add(["I grow tomatoes", "I keep bees"], user_id=user)
    run = await embedded.runs.wait(added.run_id, timeout=30)
    assert run.status == "completed" and run.committed_operations is not None
    assert len(run.committed_operations.created) == 2

    found = await embedded.memories.search("bees", user_id=user, retrieval_config=BM25Retrieval())
    assert [m.content for m in found] == ["User said: I keep bees"]
    listed = await embedded.memories.list(user_id=user.upper())
    assert listed.total == 2
    memory = await embedded.memories.get(found[0].id, user_id=user)
    await embedded.memories.delete(memory.id, user_id=user)
    with pytest.raises(NotFoundError):
        await embedded.memories.get(memory.id, user_id=user)
    assert [g.name for g in await embedded.groups.list()] == ["default"]


async def test_embedded_errors(embedded: EmbeddedClient) -> None:
    with pytest.raises(ValidationError) as caught:
        await embedded.memories.add(
            PreExtractedInput(items=[PreExtractedItem(content="x", topic="Nope")]), user_id="u"
        )
    assert caught.value.errors[0]["location"] == "body.input.pre_extracted.items[0].topic"
    with pytest.raises(ValidationError) as unknown:  # Engram's 422 for an unknown group
        await embedded.memories.search("x", user_id="u", group="missing")
    assert unknown.value.status == 422
    with pytest.raises(NotFoundError):
        await embedded.runs.get("missing")


async def test_embedded_provenance_and_as_of(embedded: EmbeddedClient) -> None:
    user = f"u-{uuid.uuid4().hex[:6]}"
    before = datetime.now(UTC)
    added = await embedded.memories.add("I bake rye bread", user_id=user)
    run = await embedded.runs.wait(added.run_id, timeout=30)
    assert run.committed_operations is not None
    memory_id = run.committed_operations.created[0].memory_id
    provenance = await embedded.memories.provenance(memory_id, user_id=user)
    assert provenance.run_ids == [run.run_id] and provenance.versions[0].operation == "created"
    assert (await embedded.memories.list(user_id=user, as_of=before)).total == 0
    assert len(await embedded.memories.search("rye", user_id=user, as_of=before)) == 0
    assert len(await embedded.memories.search("rye", user_id=user)) == 1
    with pytest.raises(NotFoundError):
        await embedded.memories.provenance(memory_id, user_id="someone-else")


async def test_embedded_has_the_servers_own_calls_too(embedded: EmbeddedClient) -> None:
    """The in-process client is the async client on another transport: `verify`, `status`
    and `import_batch` answer as the server would, refusals included."""
    await embedded.verify()
    status = await embedded.status()
    assert status["project"] == embedded.project and isinstance(status["recent_failures"], list)
    with pytest.raises(ValidationError) as refused:
        await embedded.import_batch({"memories": [{"content": "no id, no topic"}]})
    assert refused.value.status == 422 and refused.value.errors
    report = await embedded.import_batch({"groups": [], "memories": []})
    assert report["imported"] == 0 and report["groups"] == 0
