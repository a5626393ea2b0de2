"""Topic selectors are bound as parameters: a new selector list compiles no new statement.

Each distinct list of 5,000 selectors used to compile (and keep in SQLAlchemy's compiled
cache) a statement of its own, ~23 MiB each. Counted here by the cache misses of every
statement the engine executes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.engine.interfaces import CacheStats

from mnemo.core.engine import Engine
from tests.integration.engine.helpers import add_and_wait, facts, listing, search

pytestmark = pytest.mark.integration

GROUP = {
    "topics": [
        {"name": "Shared", "description": "Team facts.", "scoping": {"scope_properties": ["team"]}},
        {"name": "Open", "description": "Anything public."},
        {"name": "Mine", "description": "User facts.", "scoping": {"user_scoped": True}},
        {
            "name": "MyTeam",
            "description": "User facts per team.",
            "scoping": {"user_scoped": True, "scope_properties": ["team"]},
        },
    ],
    "pipeline": {"steps": [{"id": "c", "kind": "commit", "input_type": "pre_extracted"}]},
}
NAMES = [t["name"] for t in GROUP["topics"]]
TEAM_SCOPED = {"Shared", "MyTeam"}
MODES = ("vector", "bm25", "hybrid", "fetch")


class MissCounter:
    """Statements over `memories` that SQLAlchemy had to compile (cache misses) while
    attached. (Others, e.g. the group cache reloading after its TTL, are not selectors'.)"""

    def __init__(self) -> None:
        self.misses: list[str] = []

    def __call__(self, conn, cursor, statement, parameters, context, executemany) -> None:
        compiled = (CacheStats.CACHE_MISS, CacheStats.NO_CACHE_KEY)
        if isinstance(context, DefaultExecutionContext) and context.cache_hit in compiled:
            if "FROM memories" in statement:
                self.misses.append(statement)


@pytest.fixture
def misses(engine: Engine) -> Iterator[MissCounter]:
    counter = MissCounter()
    event.listen(engine.db.sync_engine, "after_cursor_execute", counter)
    yield counter
    event.remove(engine.db.sync_engine, "after_cursor_execute", counter)


def _selectors(rnd: random.Random, serial: int) -> list[Any]:
    chosen = rnd.sample(NAMES, rnd.randint(1, len(NAMES))) * rnd.randint(1, 3)
    selectors: list[Any] = []
    for index, name in enumerate(chosen):
        if rnd.random() < 0.5:
            selectors.append(name)
        else:
            # A value only for topics scoped by `team`; None (clear) is allowed for any.
            scoped = name in TEAM_SCOPED and rnd.random() < 0.7
            team = f"team-{serial}-{index}" if scoped else None
            selectors.append({"name": name, "properties": {"team": team}})
    return selectors


async def _query(engine: Engine, project: str, mode: str, topics: list, props: dict) -> None:
    await search(
        engine, project, "team facts", mode, user_id="ann", topics=topics, properties=props
    )
    await listing(engine, project, user_id="ann", topics=topics, properties=props)


async def test_new_selector_lists_compile_no_new_statements(
    engine: Engine, project: str, misses: MissCounter
) -> None:
    await engine.put_group(project, "default", GROUP)
    items = [(name, f"{name} fact number {i}.") for i in range(3) for name in NAMES]
    await add_and_wait(
        engine, project, {"user_id": "ann", "properties": {"team": "t0"}, "input": facts(*items)}
    )
    # Every shape once: shared topics, the user's own, or both; with or without filters
    # (a filter applies only to topics scoped by its key, so these are team-scoped).
    for mode in MODES:
        for topics in (["Shared"], ["MyTeam"], ["Shared", "MyTeam"]):
            for props in ({}, {"team": "x"}):
                await _query(engine, project, mode, topics, props)
    misses.misses.clear()
    rnd = random.Random(12)
    for serial in range(40):  # 40 new, distinct selector lists
        props = {"team": f"t{serial}"} if serial % 3 == 0 else {}
        await _query(engine, project, MODES[serial % 4], _selectors(rnd, serial), props)
    assert misses.misses == [], "\n\n".join(misses.misses)
