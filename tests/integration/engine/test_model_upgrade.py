"""A database of mnemo's earlier bundled model (all-MiniLM-L6-v2) meets the bundled
bge-small: the embedded mode converts it at start-up, the distributed services refuse it
with the way out; on real Postgres with the real local model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, text

from mnemo.core.connect import open_deps
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.embeddings.local import LocalEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.settings import Settings
from mnemo.store.database import connect
from mnemo.store.embedder_identity import EmbedderMismatch
from mnemo.store.schema import memories
from tests.integration.conftest import engine_settings, scripted_client
from tests.support.embedders import SaltedEmbedder
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project, finds_a_built_memory

pytestmark = pytest.mark.integration
PROJECT = "acme"
MINILM = "local:all-MiniLM-L6-v2"


async def project_made_by(
    settings: Settings, llm_server: ScriptedLLMServer, embedder: object
) -> None:
    engine = await start_engine(settings, llm=scripted_client(llm_server), embedder=embedder)  # type: ignore[arg-type]
    try:
        await build_project(engine, PROJECT)
    finally:
        await engine.close()


async def stored(settings: Settings) -> tuple[str | None, list[tuple[str, list[float]]]]:
    database = await connect(settings.database_url, settings.data_dir, 384, 1, 40)
    try:
        async with database.db.connect() as conn:
            query = text("SELECT value FROM settings_meta WHERE key = 'embedding_model'")
            label = (await conn.execute(query)).scalar_one_or_none()
            rows = await conn.execute(select(memories.c.content, memories.c.embedding))
            return label, [(content, list(vector)) for content, vector in rows]
    finally:
        await database.close()


async def assert_converted(settings: Settings, llm_server: ScriptedLLMServer) -> None:
    embedder = LocalEmbedder()
    engine = await start_engine(settings, llm=scripted_client(llm_server), embedder=embedder)
    try:
        label, rows = await stored(settings)
        assert label == embedder.label and rows
        fresh = await embedder.embed([content for content, _ in rows])
        for (content, vector), expected in zip(rows, fresh, strict=True):
            assert float(np.dot(vector, expected)) > 0.9999, content
        assert await finds_a_built_memory(engine, PROJECT)
    finally:
        await engine.close()


async def test_the_embedded_mode_converts_a_database_of_the_earlier_bundled_model(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    settings = engine_settings(postgres.new_database("upgrade"), tmp_path)
    await project_made_by(settings, llm_server, SaltedEmbedder(label=MINILM))
    assert (await stored(settings))[0] == MINILM

    await assert_converted(settings, llm_server)


async def test_vectors_from_before_labels_are_converted_too(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    settings = engine_settings(postgres.new_database("upgrade"), tmp_path)
    await project_made_by(settings, llm_server, HashEmbedder())
    database = await connect(settings.database_url, settings.data_dir, 384, 1, 40)
    try:
        async with database.db.begin() as conn:
            await conn.execute(text("DELETE FROM settings_meta WHERE key = 'embedding_model'"))
    finally:
        await database.close()

    await assert_converted(settings, llm_server)


async def test_the_services_refuse_it_and_name_the_way_out(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    settings = engine_settings(postgres.new_database("upgrade"), tmp_path)
    await project_made_by(settings, llm_server, SaltedEmbedder(label=MINILM))
    embedder = LocalEmbedder()
    with pytest.raises(EmbedderMismatch, match=r"bundled embedding model .* run `mnemo reembed`"):
        await open_deps(settings, pool_size=1, llm=OfflineLLM(embedder), embedder=embedder)
    assert (await stored(settings))[0] == MINILM  # nothing converted


async def test_another_models_database_is_not_converted(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    settings = engine_settings(postgres.new_database("upgrade"), tmp_path)
    await project_made_by(settings, llm_server, SaltedEmbedder(label="openai-compatible:x"))
    with pytest.raises(EmbedderMismatch, match="made by openai-compatible:x"):
        await start_engine(settings, llm=scripted_client(llm_server), embedder=LocalEmbedder())
