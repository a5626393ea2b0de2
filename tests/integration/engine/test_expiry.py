"""Issue 32: a topic's `ttl_days` and `expire_unrecalled_days`.

Expired memories leave search (every mode) and list; they stay reachable by id through
history and provenance (raw-input retention is what removes them). The filter is store code
shared by both modes (`store.tenancy.visible_memories`). Time is moved by rewriting the
memories' `updated_at` and the recall log in the database, as days passing would.
"""

from __future__ import annotations

import pytest
from sqlalchemy import text

from mnemo.core.engine import Engine
from tests.integration.engine.helpers import add_and_wait, facts, listing, search

pytestmark = pytest.mark.integration

GROUP = {
    "topics": [
        {"name": "Trips", "description": "Trips.", "scoping": {"user_scoped": True},
         "ttl_days": 30},
        {"name": "Moods", "description": "Moods.", "scoping": {"user_scoped": True},
         "expire_unrecalled_days": 10},
        {"name": "Facts", "description": "Facts.", "scoping": {"user_scoped": True}},
    ],
    "pipeline": {"steps": [
        {"id": "p", "kind": "extract", "input_type": "pre_extracted", "next": "c"},
        {"id": "c", "kind": "commit"},
    ]},
}  # fmt: skip


async def _age(engine: Engine, project: str, content: str, days: int) -> None:
    async with engine.db.begin() as conn:
        await conn.execute(
            text(
                "UPDATE memories SET updated_at = updated_at - make_interval(days => :d) "
                "WHERE project = :p AND content = :c"
            ),
            {"d": days, "p": project, "c": content},
        )


async def test_expired_memories_leave_search_and_list_but_not_history(
    engine: Engine, project: str
) -> None:
    await engine.put_group(project, "exp", GROUP)
    items = [
        ("Trips", "User flew to Oslo in May."),
        ("Trips", "User booked a trip to Rome."),
        ("Moods", "User felt tired on Monday."),
        ("Moods", "User felt great on Friday."),
        ("Facts", "User lives in Oslo."),
    ]
    run = await add_and_wait(
        engine, project, {"group": "exp", "user_id": "e", "input": facts(*items)}
    )
    assert run.status == "completed", run.error
    scope = {"group": "exp", "user_id": "e"}
    await _age(engine, project, "User flew to Oslo in May.", 31)  # past its ttl
    await _age(engine, project, "User booked a trip to Rome.", 29)  # not yet
    await _age(engine, project, "User felt tired on Monday.", 11)  # unrecalled for 11 days
    await _age(engine, project, "User felt great on Friday.", 11)
    await _age(engine, project, "User lives in Oslo.", 400)  # no expiry on Facts
    async with engine.db.begin() as conn:  # ... but Friday's mood was recalled yesterday
        await conn.execute(text(
            "INSERT INTO memory_recalls (project, \"group\", user_id, properties, memory_id, "
            "recalled_at) SELECT project, \"group\", user_id, properties, id, "
            "now() - interval '1 day' FROM memories WHERE project = :p AND content = :c"),
            {"p": project, "c": "User felt great on Friday."})  # fmt: skip

    live = {
        "User booked a trip to Rome.",
        "User felt great on Friday.",
        "User lives in Oslo.",
    }
    listed = await listing(engine, project, **scope)
    assert {m.content for m in listed} == live
    for mode in ("vector", "bm25", "hybrid", "fetch"):
        hits = await search(engine, project, "Oslo Monday tired trip", mode=mode, **scope)
        assert {h.content for h in hits} <= live, mode
        assert "User flew to Oslo in May." not in {h.content for h in hits}, mode

    expired = await _ids(
        engine, project, ["User flew to Oslo in May.", "User felt tired on Monday."]
    )
    assert await engine.expired_memory_ids(project, "exp", [*expired, listed[0].id]) == set(expired)
    for memory_id in expired:  # still reachable by id: provenance and history
        found = await engine.memory_provenance(project, "exp", "e", memory_id)
        assert found is not None and found.versions


async def _ids(engine: Engine, project: str, contents: list[str]) -> list[str]:
    async with engine.db.connect() as conn:
        rows = await conn.execute(
            text("SELECT id FROM memories WHERE project = :p AND content = ANY(:c)"),
            {"p": project, "c": contents},
        )
        return [r.id for r in rows]
