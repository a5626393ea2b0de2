"""bench.retrieval loads a development set through the commit step's code and ranks
through `Engine.search`: each document one memory of its user, tagged with its id, in its
session's run at its own time. (Section 8 of `make bench` runs exactly this on BEAM and
LoCoMo; a change to the store's commit path once broke it unnoticed.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.retrieval import ID_PROPERTY, PROJECT, load, ranked
from bench.retrieval_data import Dataset, Origin, Question
from mnemo.core.engine import Engine
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.settings import Settings
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration
START = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
TURNS = {
    "ann": [
        ("D1:1", "s1", "Did you go to the pottery workshop?"),
        ("D1:2", "s1", "Yes, we glazed three bowls there."),
        ("D2:1", "s2", "My sister adopted a greyhound named Comet."),
    ],
    "bob": [("D1:1", "s1", "I am training for the Lisbon marathon.")],
}


@pytest.fixture
async def engine(postgres: EmbeddedPostgres, tmp_path: Path) -> AsyncIterator[Engine]:
    settings = Settings(database_url=postgres.new_database(), data_dir=tmp_path, workers=1)
    engine = await start_engine(settings, embedder=HashEmbedder(), run_workers=False)
    yield engine
    await engine.close()


def dataset() -> Dataset:
    data = Dataset(name="tiny")
    for user, turns in TURNS.items():
        data.documents[user] = [(doc_id, text) for doc_id, _, text in turns]
        for n, (doc_id, session, _) in enumerate(turns):
            data.origins[(user, doc_id)] = Origin(session, START + timedelta(minutes=n))
    question = Question("ann", "what was the dog called?", frozenset({"D2:1"}), "single-hop")
    data.questions.append(question)
    return data


async def test_every_document_is_one_memory_of_its_user_in_its_sessions_run(
    engine: Engine,
) -> None:
    await load(engine, dataset())

    for user, turns in TURNS.items():
        found = await ranked(engine, user, "*", "fetch", 10)
        assert sorted(doc for doc, _ in found) == sorted(doc for doc, _, _ in turns)
    async with engine.db.connect() as conn:
        rows = (
            await conn.exec_driver_sql(
                "SELECT properties->>%(id)s, run_ids[1], event_time FROM memories"
                " WHERE project = %(project)s AND user_id = 'ann'",
                {"id": ID_PROPERTY, "project": PROJECT},
            )
        ).all()
    stored = {doc: (run, when) for doc, run, when in rows}
    assert stored["D1:1"][0] == stored["D1:2"][0] != stored["D2:1"][0]
    assert stored["D1:2"][1] == START + timedelta(minutes=1)


async def test_questions_rank_their_users_documents_by_id(engine: Engine) -> None:
    await load(engine, dataset())

    found = await ranked(engine, "ann", "greyhound Comet", "bm25", 5)

    assert found[0][0] == "D2:1"
    assert {doc for doc, _ in found} <= {"D1:1", "D1:2", "D2:1"}  # never another user's
