"""BM25 postings (`memory_terms`) follow every write to `memories`, and ranking from them
equals ranking from the documents themselves (the as-of path), scores included."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import text

from mnemo.core.engine import Engine
from mnemo.domain.scope import bounded_memory_id
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.store.bm25 import bm25_search
from mnemo.store.corpus_stats import count
from mnemo.store.schema import TERM_CHARS
from mnemo.store.tenancy import visible_memories
from tests.integration.engine.helpers import add_and_wait, facts, listing, search

pytestmark = pytest.mark.integration

GROUP = {
    "topics": [
        {"name": "Profile", "description": "The user's profile.",
         "scoping": {"user_scoped": True}, "is_bounded": True},
        {"name": "Notes", "description": "Anything about the user.",
         "scoping": {"user_scoped": True}},
        {"name": "Team", "description": "Facts of a team.",
         "scoping": {"scope_properties": ["team"]}},
    ],
    "pipeline": {"steps": [{"id": "c", "kind": "commit", "input_type": "pre_extracted"}]},
}  # fmt: skip


async def _postings(engine: Engine, memory_id: str) -> dict[str, tuple[int, int, str]]:
    """lexeme -> (tf, dl, status) of one memory."""
    async with engine.database.db.connect() as conn:
        rows = await conn.execute(
            text("SELECT lexeme, tf, dl, status FROM memory_terms WHERE memory_id = :id"),
            {"id": memory_id},
        )
        return {lexeme: (tf, dl, status) for lexeme, tf, dl, status in rows}


async def _add(engine: Engine, project: str, user: str, *items: tuple[str, str]) -> None:
    body = {"group": "g", "user_id": user, "properties": {"team": "red"}, "input": facts(*items)}
    run = await add_and_wait(engine, project, body)
    assert run.status.value == "completed", run.error


async def test_postings_follow_commits_rewrites_status_deletes_and_erasure(
    engine: Engine, project: str
) -> None:
    await engine.put_group(project, "g", GROUP)
    await _add(engine, project, "ana", ("Notes", "Coffee, coffee and more coffee at standup."))
    (note,) = await listing(engine, project, group="g", user_id="ana", topics=["Notes"])
    assert await _postings(engine, note.id) == {
        "coffe": (3, 4, "active"),
        "standup": (1, 4, "active"),
    }
    # A bounded topic's rewrite replaces the postings (and the tf of the new text).
    profile = bounded_memory_id(project, "g", "Profile", {"user_id": "ana"})
    await _add(engine, project, "ana", ("Profile", "Prefers tea."))
    await _add(engine, project, "ana", ("Profile", "Prefers green tea, green always."))
    assert set(await _postings(engine, profile)) == {"prefer", "green", "tea", "alway"}
    assert (await _postings(engine, profile))["green"][0] == 2
    # A status change (consolidation, and its release) is copied; archived leaves.
    async with engine.database.db.begin() as conn:
        await conn.execute(
            text("UPDATE memories SET status = 'consolidated' WHERE id = :id"), {"id": note.id}
        )
    assert {s for _, _, s in (await _postings(engine, note.id)).values()} == {"consolidated"}
    async with engine.database.db.begin() as conn:
        await conn.execute(
            text("UPDATE memories SET status = 'active' WHERE id = :id"), {"id": note.id}
        )
    await engine.delete_memory(project, "g", "ana", note.id)
    assert await _postings(engine, note.id) == {}
    assert [m.content for m in await search(engine, project, "coffee", "bm25", group="g",
                                            user_id="ana", topics=["Notes"])] == []  # fmt: skip
    await engine.erase_user(project, "ana")
    assert await _postings(engine, profile) == {}


async def test_a_token_longer_than_a_posting_keeps_its_matches(
    engine: Engine, project: str
) -> None:
    token = "x" * 20 + "y" * 40
    assert len(token) > TERM_CHARS
    await engine.put_group(project, "g", GROUP)
    await _add(engine, project, "bo", ("Notes", f"The build id is {token} today."))
    await _add(engine, project, "bo", ("Notes", "Nothing to see here."))
    hits = await search(engine, project, token, "bm25", group="g", user_id="bo", topics=["Notes"])
    assert [m.content for m in hits] == [f"The build id is {token} today."]


WORDS = "apple river stone cloud maple honey violin garden copper lantern quiet swift".split()


async def test_postings_rank_exactly_as_the_documents_do(engine: Engine, project: str) -> None:
    """Random texts of a small vocabulary (repeats, varied lengths) across users, topics and
    teams; every query under every filter shape gets the same ids in the same order with the
    same scores from the postings table as from the documents."""
    await engine.put_group(project, "g", GROUP)
    rnd = random.Random(5)
    for user in ("ana", "bo", "cy"):
        for team in ("red", "blue"):
            items = [
                (rnd.choice(["Notes", "Team"]), " ".join(rnd.choices(WORDS, k=rnd.randint(1, 9))))
                for _ in range(12)
            ]
            body = {"group": "g", "user_id": user, "properties": {"team": team},
                    "input": facts(*items)}  # fmt: skip
            assert (await add_and_wait(engine, project, body)).status.value == "completed"
    group = await engine.group(project, "g")
    shapes = [
        MemoryQuery(project=project, group="g", user_id="ana",
                    topics=(TopicSelector(name="Notes"),)),
        MemoryQuery(project=project, group="g", user_id="bo",
                    topics=(TopicSelector(name="Notes"), TopicSelector(name="Team"))),
        MemoryQuery(project=project, group="g", user_id="cy", properties={"team": "blue"},
                    topics=(TopicSelector(name="Notes"), TopicSelector(name="Team"))),
    ]  # fmt: skip
    compared = 0
    async with engine.database.db.connect() as conn:
        for query in shapes:
            where = visible_memories(query, group)
            corpus = await count(conn, where)
            for _ in range(15):
                words = " ".join(rnd.sample(WORDS, rnd.randint(1, 4)))
                indexed = await bm25_search(conn, where, words, 10, corpus, indexed=True)
                documents = await bm25_search(conn, where, words, 10, corpus, indexed=False)
                assert [(r.id, round(s, 9)) for r, s in indexed] == [
                    (r.id, round(s, 9)) for r, s in documents
                ], (query, words)
                compared += len(indexed)
    assert compared > 200  # the queries did match
