"""One embedder per database: a process embedding with another model, of the same vector
size or not, is refused at start-up with the way out; on real Postgres."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import text

from mnemo.contracts.embedder import Embedder
from mnemo.core.connect import open_deps
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.settings import Settings
from mnemo.store.database import connect
from mnemo.store.embedder_identity import EmbedderMismatch
from tests.integration.conftest import engine_settings, scripted_client
from tests.support.embedders import SaltedEmbedder
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project

pytestmark = pytest.mark.integration


def model(label: str) -> SaltedEmbedder:
    return SaltedEmbedder(salt=label, label=label)


async def open_with(url: str, tmp_path: Path, dim: int, embedder: Embedder | None) -> None:
    database = await connect(url, tmp_path, dim, 1, 40, embedder)
    await database.close()


async def stored_label(url: str, tmp_path: Path) -> str | None:
    database = await connect(url, tmp_path, 384, 1, 40)
    try:
        async with database.db.connect() as conn:
            query = text("SELECT value FROM settings_meta WHERE key = 'embedding_model'")
            return (await conn.execute(query)).scalar_one_or_none()
    finally:
        await database.close()


async def test_the_first_embedder_is_recorded_and_another_of_the_same_size_refused(
    postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    url = postgres.new_database("identity")
    await open_with(url, tmp_path, 384, model("local:all-MiniLM-L6-v2"))
    await open_with(url, tmp_path, 384, model("local:all-MiniLM-L6-v2"))  # the same: fine
    await open_with(url, tmp_path, 384, None)  # a process that never embeds: fine

    with pytest.raises(EmbedderMismatch) as refused:
        await open_with(url, tmp_path, 384, model("openai-compatible:all-minilm"))
    message = str(refused.value)
    assert "made by local:all-MiniLM-L6-v2" in message
    assert "configured embedder is openai-compatible:all-minilm" in message
    assert "mnemo reembed" in message
    assert await stored_label(url, tmp_path) == "local:all-MiniLM-L6-v2"


async def test_another_vector_size_is_refused_even_without_a_label(
    postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    url = postgres.new_database("identity")
    await open_with(url, tmp_path, 384, HashEmbedder(dim=384))
    with pytest.raises(EmbedderMismatch, match="stores 384-dimensional embeddings"):
        await open_with(url, tmp_path, 768, None)


async def test_an_empty_database_from_before_labels_takes_the_first_embedder(
    postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    url = postgres.new_database("identity")
    await open_with(url, tmp_path, 384, None)  # migrated; no embedder has connected
    assert await stored_label(url, tmp_path) is None
    await open_with(url, tmp_path, 384, HashEmbedder(dim=384))
    assert await stored_label(url, tmp_path) == "hash:384"


async def test_vectors_from_before_labels_are_checked_against_the_first_embedder(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """A database from before labels holds vectors nothing names: the first embedder to
    connect embeds a sample again and takes the label only if it made them."""
    settings = engine_settings(postgres.new_database("identity"), tmp_path)
    engine = await start_engine(settings, llm=scripted_client(llm_server), embedder=HashEmbedder())
    try:
        await build_project(engine, "acme")
    finally:
        await engine.close()
    url = settings.database_url
    assert url is not None
    await forget_label(url, tmp_path)

    with pytest.raises(EmbedderMismatch) as refused:
        await open_with(url, tmp_path, 384, model("local:all-MiniLM-L6-v2"))
    assert refused.value.stored is None and refused.value.unlabelled
    assert "not by the configured local:all-MiniLM-L6-v2" in str(refused.value)
    assert "mnemo reembed" in str(refused.value)
    assert await stored_label(url, tmp_path) is None  # the refused one recorded nothing

    await open_with(url, tmp_path, 384, HashEmbedder(dim=384))  # the model that made them
    assert await stored_label(url, tmp_path) == "hash:384"


async def forget_label(url: str, tmp_path: Path) -> None:
    """Make the database look like one from before labels were recorded."""
    database = await connect(url, tmp_path, 384, 1, 40)
    try:
        async with database.db.begin() as conn:
            await conn.execute(text("DELETE FROM settings_meta WHERE key = 'embedding_model'"))
    finally:
        await database.close()


async def test_start_up_fails_at_once_rather_than_retrying(
    postgres: EmbeddedPostgres, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = postgres.new_database("identity")
    await open_with(url, tmp_path, 384, model("local:all-MiniLM-L6-v2"))
    settings = Settings(database_url=url, data_dir=tmp_path, embedding_provider="hash")
    caplog.set_level(logging.WARNING, logger="mnemo.core.connect")
    embedder = HashEmbedder(dim=384)
    with pytest.raises(EmbedderMismatch, match="configured embedder is hash:384"):
        await open_deps(
            settings, pool_size=1, llm=OfflineLLM(embedder), embedder=embedder, connect_attempts=5
        )
    assert "retrying" not in caplog.text  # a waiting loop would only delay the same refusal
