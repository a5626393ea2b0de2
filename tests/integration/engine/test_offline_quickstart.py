"""The offline provider end to end with the real local embedding model: no API key at all."""

from __future__ import annotations

import pytest

from mnemo.core.engine import Engine
from tests.integration.engine.helpers import add_and_wait, chat, listing, search

pytestmark = pytest.mark.integration


async def test_quickstart_without_an_api_key(offline_engine: Engine, project: str) -> None:
    run = await add_and_wait(
        offline_engine,
        project,
        {
            "user_id": "sam",
            "input": chat(
                (
                    "user",
                    "Hi! I work from home as a data engineer. I prefer dark mode in every editor.",
                ),
                ("assistant", "Noted, I will remember that."),
                ("user", "Can you recommend a keyboard?"),
            ),
        },
    )
    assert run.status == "completed", run.error
    contents = sorted(
        m.content
        for m in await listing(offline_engine, project, user_id="sam", topics=["UserKnowledge"])
    )
    assert contents == [
        "User prefers dark mode in every editor.",
        "User works from home as a data engineer.",
    ]
    hits = await search(
        offline_engine,
        project,
        "what theme does the user like?",
        user_id="sam",
        topics=["UserKnowledge"],
    )
    assert hits and hits[0].content == "User prefers dark mode in every editor."
    fetched = await search(offline_engine, project, "-", mode="fetch", user_id="sam")
    # Fetch: the bounded profile first, then the other memories of the scope.
    assert [m.topic for m in fetched] == ["UserProfile", "UserKnowledge", "UserKnowledge"]


async def test_offline_preference_change_keeps_history(
    offline_engine: Engine, project: str
) -> None:
    await add_and_wait(
        offline_engine, project, {"user_id": "kim", "input": chat(("user", "I prefer dark mode."))}
    )
    second = await add_and_wait(
        offline_engine,
        project,
        {"user_id": "kim", "input": chat(("user", "I prefer light mode now."))},
    )
    live = await listing(offline_engine, project, user_id="kim", topics=["UserKnowledge"])
    ops = second.committed_operations
    assert ops is not None and ops.created == []
    assert live[0].id in {o.memory_id for o in ops.updated}
    assert [m.content for m in live] == ["User prefers light mode now."]
    history = await offline_engine.memory_history(project, "default", "kim", live[0].id)
    assert [v.content for v in history] == ["User prefers dark mode."]
