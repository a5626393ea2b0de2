"""Searches embed their query with `embed_query` (a model's query instruction goes there),
memories with `embed`; on real Postgres."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from mnemo.domain.requests import SearchRequest
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from tests.integration.conftest import engine_settings, scripted_client
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project

pytestmark = pytest.mark.integration


class RecordingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []
        self.stored: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.stored.extend(texts)
        return await super().embed(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        self.queries.extend(texts)
        return await super().embed(texts)


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
async def test_search_embeds_its_query_as_a_query(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path, mode: str
) -> None:
    embedder = RecordingEmbedder()
    settings = engine_settings(postgres.new_database("queries"), tmp_path)
    engine = await start_engine(settings, llm=scripted_client(llm_server), embedder=embedder)
    try:
        await build_project(engine, "acme")
        assert "ana keeps bees." in embedder.stored and not embedder.queries
        request = SearchRequest.model_validate({
            "query": "who keeps bees?", "user_id": "ana", "group": "moves",
            "retrieval_config": {"retrieval_type": mode, "limit": 3},
        })  # fmt: skip
        found = await engine.search("acme", request)
    finally:
        await engine.close()
    assert embedder.queries == ["who keeps bees?"]
    assert "who keeps bees?" not in embedder.stored
    assert any(m.content == "ana keeps bees." for m in found)
