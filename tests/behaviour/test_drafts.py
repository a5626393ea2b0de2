"""Drafts are invisible until commit: while a run's reconcile is under way (its items
extracted, its drafts not committed), no read shows them; after the commit, all do."""

from __future__ import annotations

import threading
from typing import Any

from mnemo.domain.requests import SearchRequest
from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import add, completed, contents, status, until
from tests.support.scripted_llm import echo_transform_with_context

RECONCILED = {
    "topics": [{"name": "Facts", "description": "Facts.", "scoping": {"user_scoped": True}}],
    "pipeline": {"steps": [
        {"id": "extract", "kind": "extract", "input_type": "string", "next": "reconcile"},
        {"id": "reconcile", "kind": "transform_with_context", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip


async def test_nothing_of_a_run_is_visible_before_its_commit(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "r", RECONCILED)
    first = await add(mode, project, "r", "u", {"string": {"content": ["I keep bees"]}})
    await completed(mode, project, first.run_id)  # reconcile is asked once memories exist
    release = threading.Event()

    def held_reconcile(request: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)  # the test reads meanwhile (it never needs the LLM to read)
        return echo_transform_with_context(request)

    mode.llm.script("transform_with_context", held_reconcile)
    run = await add(mode, project, "r", "u", {"string": {"content": ["I keep wasps"]}})
    try:
        await until(
            lambda: _async(len(mode.llm.calls_for("transform_with_context"))),
            lambda n: n == 1, mode, "reconcile asked",
        )  # fmt: skip
        assert await contents(mode, project, "r", "u") == ["User said: I keep bees"]
        request = SearchRequest.model_validate({"query": "wasps", "group": "r", "user_id": "u"})
        assert [m.content for m in await mode.engine.search(project, request)] == [
            "User said: I keep bees"
        ]
        assert await status(mode, project, run.run_id) == "running"
    finally:
        release.set()
    await completed(mode, project, run.run_id)
    assert await contents(mode, project, "r", "u") == [
        "User said: I keep bees",
        "User said: I keep wasps",
    ]
    found = [m.content for m in await mode.engine.search(project, request)]
    assert found[0] == "User said: I keep wasps"


async def _async(value: int) -> int:
    return value
