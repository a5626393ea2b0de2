"""Stored times no reader can hold (issue 33, failure 1): migration 0015 clamps the ones
earlier versions let in and records their originals; an export skips any it still meets,
reports them on its `end` line and goes on."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from mnemo.core.export import export_lines
from mnemo.domain.instant import MAX_INSTANT, MIN_INSTANT
from mnemo.domain.templates import group_from_template
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder, hash_embedding
from mnemo.store.database import _async_url, migrate
from tests.integration.conftest import engine_settings, scripted_client
from tests.integration.engine.helpers import listing, search
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

PROJECT = "clock-abuse"
NOW = datetime(2026, 12, 1, tzinfo=UTC)
# What Postgres stored for `9999-12-31T23:59:59-23:59` and `0001-01-01T00:00:00+23:59`.
AFTER_THE_END = "10000-01-01 23:58:59+00"
BEFORE_THE_START = "0001-12-31 00:01:00+00 BC"


def _rows(url: str, bad: dict[str, dict[str, str]]) -> list[str]:
    """A group and three memories of the user 'ana'; `bad` overrides times of the memories
    'late' and 'early' (and of their one version). Returns the memory ids, in order."""
    group = group_from_template("default", "default").model_dump(mode="json")
    ids = ["good-" + uuid.uuid4().hex, "late-" + uuid.uuid4().hex, "early-" + uuid.uuid4().hex]
    engine = create_engine(_async_url(url))
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO groups VALUES (:p, 'default', CAST(:c AS jsonb), :now, :now)"),
            {"p": PROJECT, "c": json.dumps(group), "now": NOW},
        )
        for memory_id, content in zip(
            ids, ("ana keeps bees", "ana sails", "ana rows"), strict=True
        ):
            times: dict[str, Any] = {
                "created_at": NOW, "updated_at": NOW, "event_time": NOW, "event_time_end": NOW,
            } | bad.get(memory_id.split("-")[0], {})  # fmt: skip
            conn.execute(
                text(
                    'INSERT INTO memories (id, project, "group", topic, user_id, properties, '
                    "content, embedding, status, version, run_ids, created_at, updated_at, "
                    "event_time, event_time_end, operation) VALUES (:id, :p, 'default', "
                    "'UserKnowledge', 'ana', '{}', :content, CAST(:embedding AS vector), 'active', "
                    "2, '{}', "
                    "CAST(:created_at AS timestamptz), CAST(:updated_at AS timestamptz), "
                    "CAST(:event_time AS timestamptz), CAST(:event_time_end AS timestamptz), "
                    "'created')"
                ),
                {"id": memory_id, "p": PROJECT, "content": content,
                 "embedding": str(hash_embedding(content, 384)), **times},
            )  # fmt: skip
            conn.execute(
                text(
                    'INSERT INTO memory_versions (memory_id, project, "group", version, content, '
                    "valid_from, valid_to, change, status, event_time, event_time_end, operation) "
                    "VALUES (:m, :p, 'default', 1, :content, CAST(:event_time AS timestamptz), "
                    ":now, 'updated', 'active', CAST(:event_time AS timestamptz), "
                    "CAST(:event_time_end AS timestamptz), 'created')"
                ),
                {"m": memory_id, "p": PROJECT, "content": content, "now": NOW,
                 "event_time": times["event_time"], "event_time_end": times["event_time_end"]},
            )  # fmt: skip
        conn.execute(
            text(
                'INSERT INTO buffer_watermarks (project, "group", step_id, scope_key, watermark) '
                "VALUES (:p, 'default', 'hold', 'ana-scope', '9999-06-01 00:00:00+00')"
            ),
            {"p": PROJECT},
        )
    engine.dispose()
    return ids


BAD = {
    "late": {"event_time": AFTER_THE_END, "event_time_end": AFTER_THE_END},
    "early": {"created_at": BEFORE_THE_START, "event_time": BEFORE_THE_START},
}


async def _export(engine: Any) -> list[dict[str, Any]]:
    return [json.loads(line) async for line in export_lines(engine, PROJECT, None, True)]


async def test_the_migration_clamps_unreadable_times_and_keeps_the_originals(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    url = postgres.new_database("times")
    migrate(url, 384, "0014")
    good, late, early = _rows(url, BAD)
    migrate(url, 384)
    sync = create_engine(_async_url(url))
    with sync.connect() as conn:
        kept = conn.execute(
            text("SELECT table_name, row_key, column_name, original, action FROM time_quarantine")
        ).all()
        watermarks = conn.execute(text("SELECT count(*) FROM buffer_watermarks")).scalar_one()
    sync.dispose()
    recorded = {(t, json.dumps(k, sort_keys=True), c, o, a) for t, k, c, o, a in kept}
    assert (
        "memories", json.dumps({"id": late}), "event_time", AFTER_THE_END, "clamped"
    ) in recorded  # fmt: skip
    assert (
        "memories",
        json.dumps({"id": early}),
        "created_at",
        BEFORE_THE_START,
        "clamped",
    ) in recorded
    assert {t for t, *_ in recorded} == {"memories", "memory_versions", "buffer_watermarks"}
    # memories: 2 columns each; versions: the same plus valid_from; one watermark
    assert len(recorded) == (2 + 2) + (3 + 2) + 1
    assert watermarks == 0

    engine = await start_engine(
        engine_settings(url, tmp_path), llm=scripted_client(llm), embedder=HashEmbedder()
    )
    try:
        listed = await listing(engine, PROJECT, user_id="ana", limit=10)
        assert sorted(m.id for m in listed) == sorted([good, late, early])
        by_id = {m.id: m for m in listed}
        assert by_id[late].event_time == MAX_INSTANT and by_id[early].created_at == MIN_INSTANT
        assert len(await search(engine, PROJECT, "ana", user_id="ana")) == 3
        exported = await _export(engine)
        assert exported[-1] == {"kind": "end", "memories": 3, "skipped": []}
    finally:
        await engine.close()


async def test_an_export_skips_what_it_cannot_read_reports_it_and_goes_on(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    """Rows written past the migration (an older process still running during an upgrade)."""
    url = postgres.new_database("times")
    migrate(url, 384)
    good, late, early = _rows(url, BAD)
    engine = await start_engine(
        engine_settings(url, tmp_path), llm=scripted_client(llm), embedder=HashEmbedder()
    )
    try:
        exported = await _export(engine)
    finally:
        await engine.close()
    assert [m["id"] for m in exported if m["kind"] == "memory"] == [good]
    assert exported[-1] == {"kind": "end", "memories": 1, "skipped": sorted([late, early])}
