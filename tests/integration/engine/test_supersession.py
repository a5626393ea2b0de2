"""Issue 32: a superseded value never ranks above its successor, in every retrieval mode,
and a bare name is no answer to a question that names the user.

The group here has no reconcile step (extract -> commit), so both values stay live: the
order of reads alone must put the current one first. Search is the shared engine code
(`core.engine.Engine.search`), the same in the embedded and the distributed mode.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.requests import SearchRequest
from tests.integration.engine.helpers import add_and_wait, listing, says, search

pytestmark = pytest.mark.integration

APPEND_ONLY = {
    "topics": [
        {"name": "Facts", "description": "Facts about the user.", "scoping": {"user_scoped": True}}
    ],
    "pipeline": {
        "steps": [
            {"id": "say", "kind": "extract", "input_type": "string", "next": "commit"},
            {"id": "commit", "kind": "commit"},
        ]
    },
}


async def _story(engine: Engine, project: str) -> None:
    await engine.put_group(project, "story", APPEND_ONLY)
    for said in ("Hi, I'm Maria.", "I live in Berlin.", "Big news: I moved to Lisbon last month!"):
        run = await add_and_wait(
            engine, project, {"group": "story", "user_id": "maria", "input": says(said)}
        )
        assert run.status == "completed", run.error
        assert run.produced_by == "offline"  # the label of the offline heuristics


@pytest.mark.parametrize("mode", ["vector", "bm25", "hybrid"])
async def test_the_current_city_ranks_above_the_old_one(
    offline_engine: Engine, project: str, mode: str
) -> None:
    await _story(offline_engine, project)
    hits = await search(
        offline_engine, project, "where does maria live?", mode=mode, group="story",
        user_id="maria",
    )  # fmt: skip
    contents = [h.content for h in hits]
    assert contents[0].startswith("User moved to Lisbon"), contents
    assert "User lives in Berlin." in contents  # below its successor, not gone
    assert contents.index("User lives in Berlin.") > 0
    assert contents[0] != "User's name is Maria."
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


async def test_fetch_and_list_put_the_successor_first_and_history_keeps_the_old_value(
    offline_engine: Engine, project: str
) -> None:
    await _story(offline_engine, project)
    fetched = await search(offline_engine, project, "-", mode="fetch", group="story",
                           user_id="maria")  # fmt: skip
    listed = await listing(offline_engine, project, group="story", user_id="maria")
    for memories in (fetched, listed):
        contents = [m.content for m in memories]
        lisbon = next(i for i, c in enumerate(contents) if c.startswith("User moved to Lisbon"))
        assert lisbon < contents.index("User lives in Berlin."), contents
    # As of before the move, Berlin is the answer.
    berlin = next(m for m in listed if m.content == "User lives in Berlin.")
    request = SearchRequest.model_validate({
        "query": "where does maria live?", "group": "story", "user_id": "maria",
        "as_of": (berlin.created_at + timedelta(milliseconds=1)).isoformat(),
    })  # fmt: skip
    past = await offline_engine.search(project, request)
    assert [h.content for h in past if "Lisbon" in h.content] == []
    assert "User lives in Berlin." in [h.content for h in past]


async def test_a_question_about_the_name_still_finds_it(
    offline_engine: Engine, project: str
) -> None:
    await _story(offline_engine, project)
    hits = await search(offline_engine, project, "what is her name?", mode="hybrid",
                        group="story", user_id="maria")  # fmt: skip
    assert hits[0].content == "User's name is Maria."
