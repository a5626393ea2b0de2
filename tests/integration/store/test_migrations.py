"""Migrations on real Postgres: 0004 keeps on each memory only its topic's scope properties;
0014 indexes the BM25 postings of the memories already stored; 0016 queues erases cut short."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text

from mnemo.domain.templates import group_from_template
from mnemo.store.database import migrate
from mnemo.store.tombstones import subject_sql
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _memory(memory_id: str, topic: str, properties: dict[str, str]) -> dict[str, object]:
    return {
        "id": memory_id,
        "topic": topic,
        "properties": json.dumps(properties),
        "embedding": "[" + ",".join(["0.1"] * 384) + "]",
        "now": NOW,
    }


def test_0004_strips_properties_a_topic_is_not_scoped_by(postgres: EmbeddedPostgres) -> None:
    url = postgres.new_database("migrate")
    migrate(url, 384, "0003")
    group = group_from_template("default", "engram_quickstart").model_dump(mode="json")
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO groups VALUES ('p', 'default', CAST(:config AS jsonb), :now, :now)"),
            {"config": json.dumps(group), "now": NOW},
        )
        conn.execute(
            text(
                'INSERT INTO memories (id, project, "group", topic, user_id, properties, content,'
                " embedding, status, version, run_ids, created_at, updated_at) VALUES (:id, 'p',"
                " 'default', :topic, 'ana', CAST(:properties AS jsonb), 'x', CAST(:embedding AS"
                " vector), 'active', 1, ARRAY['r1'], :now, :now)"
            ),
            [
                _memory("prefs", "DeveloperPreferences", {"repo_name": "a/b", "session_id": "s"}),
                _memory("steps", "Processes", {"repo_name": "a/b", "session_id": "s"}),
                _memory("session", "SessionHistory", {"repo_name": "a/b", "session_id": "s"}),
                _memory("gone", "RemovedTopic", {"repo_name": "a/b"}),
            ],
        )
    migrate(url, 384)
    with engine.connect() as conn:
        stored = dict(conn.execute(text("SELECT id, properties FROM memories")).all())
    engine.dispose()
    assert stored == {
        "prefs": {},
        "steps": {"repo_name": "a/b"},
        "session": {"repo_name": "a/b", "session_id": "s"},
        "gone": {"repo_name": "a/b"},  # its topic is no longer in the group: left as it was
    }


def test_0014_indexes_the_postings_of_stored_searchable_memories(
    postgres: EmbeddedPostgres,
) -> None:
    url = postgres.new_database("migrate_terms")
    migrate(url, 384, "0013")
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    rows = [
        {**_memory("kept", "Notes", {}), "content": "Tea, tea and cake.", "status": "active"},
        {**_memory("old", "Notes", {}), "content": "Tea once.", "status": "archived"},
    ]
    with engine.begin() as conn:
        conn.execute(
            text(
                'INSERT INTO memories (id, project, "group", topic, user_id, properties, content,'
                " embedding, status, version, run_ids, created_at, updated_at, event_time,"
                " event_time_end, operation) VALUES (:id, 'p', 'default', :topic, 'ana',"
                " CAST(:properties AS jsonb), :content, CAST(:embedding AS vector), :status, 1,"
                " ARRAY['r1'], :now, :now, :now, :now, 'created')"
            ),
            rows,
        )
    migrate(url, 384)
    with engine.connect() as conn:
        postings = conn.execute(
            text("SELECT memory_id, lexeme, tf, dl, user_id FROM memory_terms ORDER BY lexeme")
        ).all()
    engine.dispose()
    # Archived memories are not searchable, so they have no postings.
    assert [tuple(p) for p in postings] == [
        ("kept", "cake", 1, 3, "ana"),
        ("kept", "tea", 2, 3, "ana"),
    ]


def test_0016_queues_the_erases_earlier_versions_left_half_done(
    postgres: EmbeddedPostgres,
) -> None:
    """A tombstone whose user still has an unredacted run admitted before it is an erase
    cut short (issue 33, failure 2): it is queued in pending_erasures; a finished one (its
    runs redacted, no user named) is marked completed."""
    url = postgres.new_database("migrate")
    migrate(url, 384, "0015")
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    run = (
        'INSERT INTO runs (run_id, project, "group", input_type, starting_step, '
        "starting_step_id, user_id, properties, scope_key, status, raw_input, created_at, "
        "updated_at, redaction) VALUES (:id, 'p', 'default', 'string', 1, 'x', :user, '{}', "
        "'k', 'completed', '{}', :now, :now, :redaction)"
    )
    subject = subject_sql("'p'", "CAST(:user AS text)")
    tombstone = (
        "INSERT INTO erasures (project, subject, seq, erased_at) VALUES ('p', "
        f"{subject}, nextval('run_admission_seq'), :now)"
    )
    with engine.begin() as conn:
        conn.execute(text(run), {"id": "r-cut", "user": "ana", "now": NOW, "redaction": None})
        conn.execute(text(run), {"id": "r-done", "user": None, "now": NOW, "redaction": "erased"})
        conn.execute(text(tombstone), {"user": "ana", "now": NOW})
        conn.execute(text(tombstone), {"user": "bob", "now": NOW})
        # ana's later add, after her erase: a new start, not a sign of a cut erase
        conn.execute(text(run), {"id": "r-new", "user": "ana", "now": NOW, "redaction": None})
    migrate(url, 384)
    with engine.connect() as conn:
        pending = conn.execute(text("SELECT project, user_id FROM pending_erasures")).all()
        completed = (
            conn.execute(text("SELECT completed_at IS NOT NULL FROM erasures ORDER BY seq"))
            .scalars()
            .all()
        )
    engine.dispose()
    assert [tuple(p) for p in pending] == [("p", "ana")]
    assert completed == [False, True]  # ana's is to finish; bob's was complete
