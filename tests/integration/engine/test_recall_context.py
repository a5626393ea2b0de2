"""The context signal's neighbours (mnemo.store.neighbours) and its effect on a search, on
real Postgres: a short reply is found through the question before it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from mnemo.core.admission import memory_query
from mnemo.core.engine import Engine
from mnemo.domain.memory import Candidate, Memory
from mnemo.domain.requests import SearchRequest
from mnemo.store import commits
from mnemo.store.neighbours import neighbours

pytestmark = pytest.mark.integration
START = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
# Two sessions (runs) of one user; each turn a minute after the one before.
SESSIONS = {
    "s1": [
        "Did you go to the pottery workshop with the kids?",
        "Yes! We made bowls at the workshop.",
        "That sounds lovely.",
    ],
    # shares more of the question's words than the reply does, in another session
    "s2": ["The kids love the pottery shop downtown.", "Good for you, keep it up."],
}


async def _store(engine: Engine, project: str, user: str) -> dict[str, str]:
    """Commit the sessions' turns as memories; returns content -> memory id."""
    group = await engine.group(project, "default")
    runs = {name: f"run-{uuid.uuid4()}" for name in SESSIONS}
    candidates = [
        Candidate(
            content=text,
            topic=group.topics[0].name,
            user_id=user,
            run_id=runs[name],
            event_time=START + timedelta(days=day, minutes=n),
            event_time_end=START + timedelta(days=day, minutes=n),
        )
        for day, (name, turns) in enumerate(SESSIONS.items())
        for n, text in enumerate(turns)
    ]
    contents = [c.content for c in candidates]
    vectors = await engine.deps.embedder.embed(contents)
    batch = f"test-{uuid.uuid4()}"
    now = engine.deps.clock.now()
    async with engine.db.begin() as tx:
        embeddings = dict(zip(contents, vectors, strict=True))
        await commits.apply(tx, batch, project, group, candidates, embeddings, now)
    return {m.content: m.id for m in await _search(engine, project, user, "*", "fetch")}


async def _search(engine: Engine, project: str, user: str, text: str, mode: str) -> list[Memory]:
    request = {"query": text, "user_id": user, "retrieval_config": {"retrieval_type": mode}}
    return await engine.search(project, SearchRequest.model_validate(request))


async def test_neighbours_are_the_runs_turns_before_and_after(engine: Engine, project: str) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    ids = await _store(engine, project, user)
    s1, s2 = SESSIONS["s1"], SESSIONS["s2"]
    group = await engine.group(project, "default")
    request = SearchRequest.model_validate({"query": "q", "user_id": user})
    query = memory_query(project, group, request, engine.settings.limits)
    near = await neighbours(engine.db, query, group, [ids[s1[1]], ids[s1[2]], ids[s2[0]]])
    assert set(near[ids[s1[1]]]) == {ids[s1[0]], ids[s1[2]]}
    assert near[ids[s1[2]]] == [ids[s1[1]]]  # the session's last turn
    assert near[ids[s2[0]]] == [ids[s2[1]]]  # never across runs
    other = SearchRequest.model_validate({"query": "q", "user_id": "someone-else"})
    elsewhere = memory_query(project, group, other, engine.settings.limits)
    assert await neighbours(engine.db, elsewhere, group, [ids[s1[1]]]) == {}


@pytest.mark.parametrize("mode", ["vector", "bm25", "hybrid"])
async def test_a_reply_is_found_through_the_question_before_it(
    engine: Engine, project: str, mode: str
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    await _store(engine, project, user)
    reply = SESSIONS["s1"][1]
    query = "Did you go to the pottery workshop with the kids?"
    base = engine.settings
    try:
        engine.settings = base.model_copy(update={"recall_context_weight": 0.0})
        without = [m.content for m in await _search(engine, project, user, query, mode)]
        engine.settings = base.model_copy(update={"recall_context_weight": 0.5})
        with_context = [m.content for m in await _search(engine, project, user, query, mode)]
    finally:
        engine.settings = base
    distractor = SESSIONS["s2"][0]
    assert without[0] == with_context[0] == query  # the question itself stays first
    assert without.index(distractor) < without.index(reply)
    assert with_context.index(reply) < with_context.index(distractor)
