"""Migration 0007: user ids stored lower-cased take their NFKC + case-folded form, and their
owners find them again (bounded memories keep one id per scope)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text

from mnemo.domain.scope import bounded_memory_id, scope_key
from mnemo.domain.templates import group_from_template
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder, hash_embedding
from mnemo.store.database import MIGRATIONS, _async_url
from tests.integration.conftest import engine_settings, scripted_client
from tests.integration.engine.helpers import add_and_wait, facts
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

PROJECT = "legacy"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
OLD_STRASSE = "stra\u00dfe"  # what lower() stored for "Straße"
OLD_JOSE = "jose\u0301"  # a decomposed id, stored as sent


def _upgrade(url: str, revision: str) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", _async_url(url))
    cfg.attributes["embedding_dim"] = 384
    command.upgrade(cfg, revision)


def _memory(conn: Any, memory_id: str, topic: str, user: str, content: str) -> None:
    conn.execute(
        text(
            'INSERT INTO memories (id, project, "group", topic, user_id, properties, content, '
            "embedding, status, version, run_ids, created_at, updated_at) VALUES (:id, :p, "
            "'default', :topic, :user, '{}', :content, :embedding, 'active', 1, '{}', :now, :now)"
        ),
        {
            "id": memory_id,
            "p": PROJECT,
            "topic": topic,
            "user": user,
            "content": content,
            # the vector the embedder these tests configure makes (the database names none
            # yet, so the first process to connect checks a sample of them)
            "embedding": str(hash_embedding(content, 384)),
            "now": NOW,
        },
    )


def _legacy_rows(url: str) -> dict[str, str]:
    """Rows as the previous version stored them; returns the ids the test follows."""
    group = group_from_template("default", "default")
    profile_id = bounded_memory_id(PROJECT, "default", "UserProfile", {"user_id": OLD_STRASSE})
    ids = {"profile": profile_id, "fact": str(uuid.uuid4()), "jose": str(uuid.uuid4())}
    engine = create_engine(_async_url(url))
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO groups (project, name, config, created_at, updated_at) "
                "VALUES (:p, 'default', :config, :now, :now)"
            ),
            {"p": PROJECT, "config": json.dumps(group.model_dump(mode="json")), "now": NOW},
        )
        _memory(conn, ids["fact"], "UserKnowledge", OLD_STRASSE, "User cycles to work.")
        _memory(conn, profile_id, "UserProfile", OLD_STRASSE, "Cyclist in Berlin.")
        _memory(conn, ids["jose"], "UserKnowledge", OLD_JOSE, "User plays guitar.")
        conn.execute(
            text(
                'INSERT INTO memory_versions (memory_id, project, "group", version, content, '
                "valid_from, valid_to, change) VALUES (:m, :p, 'default', 0, 'Cyclist.', :now, "
                ":now, 'rewritten')"
            ),
            {"m": profile_id, "p": PROJECT, "now": NOW},
        )
        conn.execute(
            text(
                'INSERT INTO runs (run_id, project, "group", input_type, starting_step, '
                "starting_step_id, user_id, properties, scope_key, status, raw_input, "
                "created_at, updated_at) VALUES ('r1', :p, 'default', 'string', 1, "
                "'extract_string', :user, '{}', 'old-key', 'completed', "
                '\'{"string": {"content": ["x"]}}\', :now, :now)'
            ),
            {"p": PROJECT, "user": OLD_STRASSE, "now": NOW},
        )
        conn.execute(
            text(
                'INSERT INTO buffer_items (project, "group", step_id, scope_key, run_id, '
                "payload, created_at) VALUES (:p, 'default', 'hold', 'old-key', 'r1', :payload, "
                ":now)"
            ),
            {"p": PROJECT, "payload": json.dumps({"_user_id": OLD_STRASSE}), "now": NOW},
        )
    engine.dispose()
    return ids


@pytest.fixture
def migrated(postgres: EmbeddedPostgres) -> tuple[str, dict[str, str]]:
    url = postgres.new_database("legacy")
    _upgrade(url, "0006")
    ids = _legacy_rows(url)
    _upgrade(url, "head")
    return url, ids


def test_stored_ids_are_rewritten(migrated: tuple[str, dict[str, str]]) -> None:
    url, ids = migrated
    new_profile = bounded_memory_id(PROJECT, "default", "UserProfile", {"user_id": "strasse"})
    engine = create_engine(_async_url(url))
    with engine.connect() as conn:
        users = dict(conn.execute(text("SELECT id, user_id FROM memories")).all())
        versions = conn.execute(text("SELECT memory_id FROM memory_versions")).scalars().all()
        run = conn.execute(text("SELECT user_id, scope_key FROM runs")).one()
        held = conn.execute(text("SELECT payload->>'_user_id' FROM buffer_items")).scalar_one()
    engine.dispose()
    assert users == {ids["fact"]: "strasse", new_profile: "strasse", ids["jose"]: "jos\u00e9"}
    assert versions == [new_profile]
    assert tuple(run) == ("strasse", scope_key(PROJECT, "default", "strasse", {}, set()))
    assert held == "strasse"


async def test_owners_find_their_memories_again(
    migrated: tuple[str, dict[str, str]], llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    url, ids = migrated
    engine = await start_engine(
        engine_settings(url, tmp_path), llm=scripted_client(llm), embedder=HashEmbedder()
    )
    try:
        fact = await engine.get_memory(PROJECT, "default", "Stra\u00dfe", ids["fact"])
        assert fact.content == "User cycles to work."
        assert (await engine.get_memory(PROJECT, "default", "JOS\u00c9", ids["jose"])).id == ids[
            "jose"
        ]
        # The bounded profile is updated in place, not created a second time.
        run = await add_and_wait(
            engine,
            PROJECT,
            {"user_id": "STRASSE", "input": facts(("UserProfile", "Cyclist in Hamburg."))},
        )
        assert run.committed_operations is not None
        assert run.committed_operations.created == []
        new_profile = bounded_memory_id(PROJECT, "default", "UserProfile", {"user_id": "strasse"})
        assert [op.memory_id for op in run.committed_operations.updated] == [new_profile]
    finally:
        await engine.close()
