"""OpenAIEmbedder against the scripted server's /v1/embeddings (deterministic hash vectors)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator

import pytest

from mnemo.embeddings.hashing import hash_embedding
from mnemo.embeddings.openai_embedder import BATCH_SIZE, EmbeddingError, OpenAIEmbedder
from tests.support.scripted_llm import EMBEDDINGS, ScriptedLLMServer


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as scripted:
        yield scripted


# Embedders a test made; each holds an aiohttp session, closed after the test.
MADE: list[OpenAIEmbedder] = []


@pytest.fixture(autouse=True)
async def clean(server: ScriptedLLMServer) -> AsyncIterator[None]:
    server.reset()
    yield
    while MADE:
        await MADE.pop().aclose()


def make_embedder(server: ScriptedLLMServer, model: str, dim: int = 64) -> OpenAIEmbedder:
    embedder = OpenAIEmbedder(
        base_url=server.base_url,
        api_key=None,
        model=model,
        dim=dim,
        max_attempts=3,
        retry_wait_scale=0.0,
    )
    MADE.append(embedder)
    return embedder


async def test_batches_keep_order_and_vectors_are_unit_length(server: ScriptedLLMServer) -> None:
    texts = [f"memory number {i}" for i in range(BATCH_SIZE + 3)]

    vectors = await make_embedder(server, "text-embedding-3-small").embed(texts)

    assert len(vectors) == len(texts)
    assert vectors[-1] == pytest.approx(hash_embedding(texts[-1], 64))
    assert all(math.isclose(math.fsum(v * v for v in vec), 1.0) for vec in vectors)
    calls = server.embedding_calls
    assert [len(c["input"]) for c in calls] == [BATCH_SIZE, 3]
    assert calls[0]["dimensions"] == 64


async def test_dimensions_are_only_sent_to_text_embedding_3(server: ScriptedLLMServer) -> None:
    server.embedding_dim = 64
    try:
        await make_embedder(server, "nomic-embed-text").embed(["hello"])
    finally:
        server.embedding_dim = 384

    assert "dimensions" not in server.embedding_calls[0]


async def test_server_errors_are_retried(server: ScriptedLLMServer) -> None:
    server.fail(EMBEDDINGS, status=502, times=2)

    [vector] = await make_embedder(server, "text-embedding-3-small").embed(["hello"])

    assert len(vector) == 64
    assert len(server.embedding_calls) == 3


async def test_a_dimension_mismatch_is_reported(server: ScriptedLLMServer) -> None:
    with pytest.raises(EmbeddingError, match="384-dimensional"):
        await make_embedder(server, "nomic-embed-text", dim=64).embed(["hello"])


async def test_exhausted_retries_raise_a_readable_error(server: ScriptedLLMServer) -> None:
    server.fail(EMBEDDINGS, status=503, times=10)

    with pytest.raises(EmbeddingError, match=r"failed after 3 attempts: 503 Service Unavailable"):
        await make_embedder(server, "text-embedding-3-small").embed(["hello"])


async def test_prefixes_go_in_front_of_queries_and_of_everything_else(
    server: ScriptedLLMServer,
) -> None:
    embedder = OpenAIEmbedder(
        base_url=server.base_url, api_key=None, model="nomic-embed-text", dim=64,
        query_prefix="search_query: ", document_prefix="search_document: ",
    )  # fmt: skip
    MADE.append(embedder)
    server.embedding_dim = 64
    try:
        stored = await embedder.embed(["ana keeps bees"])
        asked = await embedder.embed_query(["who keeps bees?"])
    finally:
        server.embedding_dim = 384

    inputs = [call["input"] for call in server.embedding_calls]
    assert inputs == [["search_document: ana keeps bees"], ["search_query: who keeps bees?"]]
    assert stored[0] == pytest.approx(hash_embedding("search_document: ana keeps bees", 64))
    assert asked[0] == pytest.approx(hash_embedding("search_query: who keeps bees?", 64))
    # Prefixes change the vectors, so a database made without them refuses this embedder.
    assert embedder.label == (
        "openai-compatible:nomic-embed-text (query 'search_query: ', document 'search_document: ')"
    )


async def test_without_prefixes_queries_embed_as_memories_and_the_label_is_the_model(
    server: ScriptedLLMServer,
) -> None:
    embedder = make_embedder(server, "text-embedding-3-small")

    assert await embedder.embed_query(["hello"]) == await embedder.embed(["hello"])
    assert [call["input"] for call in server.embedding_calls] == [["hello"], ["hello"]]
    assert embedder.label == "openai-compatible:text-embedding-3-small"
