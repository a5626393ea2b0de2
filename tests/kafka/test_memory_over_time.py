"""Example 6 through the Kafka services (the committer runs reconcile, the gate and
consolidation passes), with the LLM's answers scripted on the services' shared server.
Examples 4 and 5 run on both transports: tests/behaviour/test_consolidation.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mnemo.domain.memory import Run
from mnemo.domain.requests import AddRequest, ListRequest, SearchRequest
from tests.kafka.conftest import Cluster
from tests.kafka.helpers import wait_all
from tests.support.dynamics import (
    BENCH,
    DESK,
    extract_as,
    facts,
)

pytestmark = pytest.mark.kafka

AT_DESK = {"group": "luthier", "user_id": "luthier-1", "properties": {"desk_id": DESK}}
PRINTER = {"group": "darkroom", "user_id": "printer-1", "properties": {"bench_id": BENCH}}
PREFERENCES = {
    "topics": [{"name": "UserKnowledge", "description": "Facts about the user.",
                "scoping": {"user_scoped": True}}],
    "pipeline": {"steps": [
        {"id": "say", "kind": "extract", "input_type": "string", "next": "reconcile"},
        {"id": "reconcile", "kind": "transform_with_context", "next": "commit",
         "min_similarity": -1.0},
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip


@pytest.fixture
def llm(cluster: Cluster) -> Iterator[Any]:
    cluster.llm.reset()
    yield cluster.llm
    cluster.llm.reset()  # back to echo answers for the other tests


async def run_done(cluster: Cluster, project: str, body: dict[str, Any]) -> Run:
    run = await cluster.engine.add(project, AddRequest.model_validate(body))
    await wait_all(cluster.engine, project, [run.run_id], timeout=60)
    return await cluster.engine.get_run(project, run.run_id)


async def listed(cluster: Cluster, project: str, **body: Any) -> list[Any]:
    found, _ = await cluster.engine.list_memories(project, ListRequest.model_validate(body))
    return found


async def searched(cluster: Cluster, project: str, query: str, **body: Any) -> list[Any]:
    request = SearchRequest.model_validate({"query": query, **body})
    return await cluster.engine.search(project, request)


async def test_example_6_a_preference_change_supersedes(
    cluster: Cluster, llm: Any, project: str
) -> None:
    await cluster.engine.put_group(project, "prefs", PREFERENCES)
    scope = {"group": "prefs", "user_id": "u6"}
    first = await run_done(
        cluster, project, {**scope, "input": facts("UserKnowledge", "User prefers dark mode.")}
    )
    assert first.committed_operations is not None
    old = first.committed_operations.created[0].memory_id
    llm.script("extract", extract_as("User prefers light mode.", "UserKnowledge"))
    llm.script(
        "transform_with_context",
        {"existing": [{"id": old, "action": "delete"}], "new": [{"index": 0, "action": "keep"}]},
    )
    second = await run_done(
        cluster, project, {**scope, "input": {"string": {"content": ["I prefer light mode now"]}}}
    )
    assert second.committed_operations is not None
    assert [o.memory_id for o in second.committed_operations.deleted] == [old]
    assert [m.content for m in await listed(cluster, project, **scope)] == [
        "User prefers light mode."
    ]
    history = await cluster.engine.memory_history(project, "prefs", "u6", old)
    assert [(v.content, v.change) for v in history] == [("User prefers dark mode.", "deleted")]
