"""`mnemo reembed` on real Postgres: every memory's and kept version's vector rewritten with
the new model of the same size, an interrupted pass blocking servers until it is resumed,
and the refusals (other connections open, another size)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from mnemo.core.engine import Engine
from mnemo.core.reembed import ReembedRefused, reembed
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.settings import Settings
from mnemo.store.database import connect
from mnemo.store.embedder_identity import EmbedderMismatch
from mnemo.store.schema import memories, memory_versions
from tests.integration.conftest import engine_settings, scripted_client
from tests.support.embedders import SaltedEmbedder
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project, finds_a_built_memory

pytestmark = pytest.mark.integration
PROJECT = "acme"


@pytest.fixture
async def settings(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> Settings:
    """A database holding a project written with the hash embedder; no process left on it."""
    settings = engine_settings(postgres.new_database("reembed"), tmp_path)
    engine = await start_engine(settings, llm=scripted_client(llm_server), embedder=HashEmbedder())
    try:
        await build_project(engine, PROJECT)
    finally:
        await engine.close()
    return settings


async def run_pass(settings: Settings, embedder: Any, batch_size: int = 3) -> Any:
    database = await connect(settings.database_url, settings.data_dir, 384, 1, 40)
    try:
        return await reembed(database.db, embedder, batch_size)
    finally:
        await database.close()


async def stored_vectors(settings: Settings) -> list[tuple[str, list[float] | None]]:
    database = await connect(settings.database_url, settings.data_dir, 384, 1, 40)
    try:
        async with database.db.connect() as conn:
            rows = [
                *(await conn.execute(select(memories.c.content, memories.c.embedding))),
                *(
                    await conn.execute(
                        select(memory_versions.c.content, memory_versions.c.embedding)
                    )
                ),
            ]
        return [(r.content, None if r.embedding is None else list(r.embedding)) for r in rows]
    finally:
        await database.close()


def made_by(embedder: Any, rows: list[tuple[str, list[float] | None]]) -> bool:
    return all(
        vector is not None
        and max(abs(a - b) for a, b in zip(vector, embedder.vector(text), strict=True)) < 1e-6
        for text, vector in rows
    )


async def start_with(settings: Settings, llm_server: ScriptedLLMServer, embedder: Any) -> Engine:
    return await start_engine(settings, llm=scripted_client(llm_server), embedder=embedder)


async def test_every_vector_is_rewritten_and_the_new_model_serves(
    settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    new = SaltedEmbedder()
    with pytest.raises(EmbedderMismatch, match="mnemo reembed"):
        await start_with(settings, llm_server, new)

    report = await run_pass(settings, new)

    rows = await stored_vectors(settings)
    versions = sum(1 for _ in rows) - report.rewritten["memories"]
    assert report.previous == "hash:384" and report.label == "salted:other"
    assert report.rewritten == {"memories": 7, "memory_versions": versions} and versions >= 4
    assert made_by(new, rows)
    engine = await start_with(settings, llm_server, new)
    try:
        assert await finds_a_built_memory(engine, PROJECT)
    finally:
        await engine.close()
    with pytest.raises(EmbedderMismatch, match="made by salted:other"):
        await start_with(settings, llm_server, HashEmbedder())
    assert (await run_pass(settings, new)).rewritten == {}  # already converted: nothing to do


async def test_an_interrupted_pass_blocks_servers_until_it_is_run_again(
    settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    with pytest.raises(ConnectionError):
        await run_pass(settings, SaltedEmbedder(fail_after=1), batch_size=3)
    with pytest.raises(EmbedderMismatch, match="has not finished; run it again"):
        await start_with(settings, llm_server, SaltedEmbedder())
    with pytest.raises(EmbedderMismatch, match="has not finished"):
        await start_with(settings, llm_server, HashEmbedder())  # nor the old one: half converted

    resumed = SaltedEmbedder()
    report = await run_pass(settings, resumed, batch_size=3)
    assert report.rewritten["memories"] == 4  # the first batch of 3 was kept
    assert made_by(resumed, await stored_vectors(settings))
    await (await start_with(settings, llm_server, resumed)).close()


async def test_refused_while_a_server_is_connected_or_for_another_size(
    settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    running = await start_with(settings, llm_server, HashEmbedder())
    try:
        with pytest.raises(ReembedRefused, match="stop every mnemo server"):
            await run_pass(settings, SaltedEmbedder())
    finally:
        await running.close()
    smaller = HashEmbedder(dim=256)
    with pytest.raises(EmbedderMismatch, match="cannot be converted in place"):
        await run_pass(settings, smaller)
    assert not made_by(SaltedEmbedder(), await stored_vectors(settings))  # nothing rewritten
