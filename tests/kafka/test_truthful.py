"""Issue 32 in the distributed mode: supersession in reads, restatements, run labels, the
guards on model output and expiry, through the Kafka stage services (the committer runs
reconcile and commits; the gateway engine reads), with the model's answers scripted on the
services' shared server (model name "scripted")."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text

from mnemo.domain.memory import Run
from mnemo.domain.requests import AddRequest, ListRequest, SearchRequest
from mnemo.settings import Settings
from tests.kafka.conftest import Cluster

pytestmark = pytest.mark.kafka

APPEND_ONLY = {
    "topics": [
        {"name": "Facts", "description": "Facts about the user.", "scoping": {"user_scoped": True}},
        {"name": "Trips", "description": "Trips.", "scoping": {"user_scoped": True},
         "ttl_days": 30},
        {"name": "Moods", "description": "Moods.", "scoping": {"user_scoped": True},
         "expire_unrecalled_days": 10},
    ],
    "pipeline": {"steps": [
        {"id": "p", "kind": "extract", "input_type": "pre_extracted", "next": "c"},
        {"id": "c", "kind": "commit"},
    ]},
}  # fmt: skip
STORY = {"topics": APPEND_ONLY["topics"][:1], "pipeline": APPEND_ONLY["pipeline"]}
RECONCILED = {
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
KNOWN = ["User prefers dark mode.", "User prefers tabs.", "User prefers vim.", "User prefers tea."]


@pytest.fixture
def llm(cluster: Cluster) -> Iterator[Any]:
    cluster.llm.reset()
    yield cluster.llm
    cluster.llm.reset()  # back to echo answers for the other tests


async def finished(cluster: Cluster, project: str, body: dict[str, Any]) -> Run:
    """The run once terminal (completed or failed)."""
    run = await cluster.engine.add(project, AddRequest.model_validate(body))
    return await cluster.engine.wait_run(project, run.run_id, 60)


def facts(*items: tuple[str, str]) -> dict[str, Any]:
    return {"pre_extracted": {"items": [{"topic": t, "content": c} for t, c in items]}}


async def listed(cluster: Cluster, project: str, **body: Any) -> list[Any]:
    found, _ = await cluster.engine.list_memories(project, ListRequest.model_validate(body))
    return found


async def searched(cluster: Cluster, project: str, query: str, mode: str, **body: Any) -> list[Any]:
    request = SearchRequest.model_validate(
        {"query": query, "retrieval_config": {"retrieval_type": mode}, **body}
    )
    return await cluster.engine.search(project, request)


async def story(cluster: Cluster, project: str) -> None:
    await cluster.engine.put_group(project, "story", STORY)
    for said in ("User's name is Maria.", "User lives in Berlin.", "User moved to Lisbon."):
        run = await finished(cluster, project, {
            "group": "story", "user_id": "maria", "input": facts(("Facts", said))})  # fmt: skip
        assert run.status == "completed", run.error


async def test_supersession_in_every_read_and_history_keeps_the_old_value(
    cluster: Cluster, project: str
) -> None:
    """Both values stay live (no reconcile): the reads put the successor first."""
    await story(cluster, project)
    scope = {"group": "story", "user_id": "maria"}
    for mode in ("vector", "bm25", "hybrid"):
        hits = await searched(cluster, project, "where does maria live?", mode, **scope)
        contents = [h.content for h in hits]
        assert contents[0] == "User moved to Lisbon.", (mode, contents)
        assert "User lives in Berlin." in contents, (mode, contents)  # below, not gone
        assert contents[0] != "User's name is Maria."
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True), mode
    fetched = await searched(cluster, project, "-", "fetch", **scope)
    for memories in (fetched, await listed(cluster, project, **scope)):
        contents = [m.content for m in memories]
        assert contents.index("User moved to Lisbon.") < contents.index("User lives in Berlin.")
    berlin = next(m for m in await listed(cluster, project, **scope) if "Berlin" in m.content)
    request = SearchRequest.model_validate({
        "query": "where does maria live?", **scope,
        "as_of": (berlin.created_at + timedelta(milliseconds=1)).isoformat(),
    })  # fmt: skip
    past = [h.content for h in await cluster.engine.search(project, request)]
    assert "User lives in Berlin." in past and "User moved to Lisbon." not in past


async def test_a_restatement_the_model_keeps_writes_nothing(
    cluster: Cluster, llm: Any, project: str
) -> None:
    await cluster.engine.put_group(project, "prefs", RECONCILED)
    body = {"group": "prefs", "user_id": "r"}
    seeded = await finished(cluster, project, {**body, "input": facts(("UserKnowledge", KNOWN[0]))})
    assert seeded.status == "completed", seeded.error
    [memory] = await listed(cluster, project, **body)
    llm.script("extract", {"memories": [{"topic": "UserKnowledge", "content": KNOWN[0]}]})
    # The model keeps the new copy and rewrites the old one to itself.
    llm.script("transform_with_context", lambda request: {
        "existing": [{"id": memory.id, "action": "rewrite", "content": "User prefers dark mode"}],
        "new": [{"index": 0, "action": "keep"}]})  # fmt: skip
    run = await finished(cluster, project, {
        **body, "input": {"string": {"content": ["As I said, I prefer dark mode."]}}})  # fmt: skip
    assert run.status == "completed", run.error
    assert len(llm.calls_for("transform_with_context")) == 1
    ops = run.committed_operations
    assert ops is not None and (ops.created, ops.updated, ops.deleted) == ([], [], [])
    assert [m.id for m in await listed(cluster, project, **body)] == [memory.id]
    assert await cluster.engine.memory_history(project, "prefs", "r", memory.id) == []


async def test_runs_and_provenance_carry_the_workers_label(cluster: Cluster, project: str) -> None:
    """The label is what the committer service ran with: the stage services here are
    configured with the default model name (MNEMO_LLM_MODEL unset), the gateway engine with
    "scripted"; the run says the former."""
    await story(cluster, project)
    worker_model = Settings.model_fields["llm_model"].default
    assert worker_model != "scripted"  # the gateway engine's model (tests/kafka/conftest.py)
    [lisbon] = [m for m in await listed(cluster, project, group="story", user_id="maria")
                if "Lisbon" in m.content]  # fmt: skip
    origin = await cluster.engine.memory_provenance(project, "story", "maria", lisbon.id)
    [version] = origin.versions
    assert version.run is not None and version.run.produced_by == worker_model
    run = await cluster.engine.get_run(project, version.run.run_id)
    assert run.produced_by == worker_model  # recorded by the committer service, at commit


@pytest.mark.parametrize(
    "existing",
    [
        pytest.param(lambda ids: [{"id": "not-shown", "action": "delete"}], id="invented-id"),
        pytest.param(
            lambda ids: [{"id": ids[0], "action": "rewrite", "content": "N/A"}], id="placeholder"
        ),
        pytest.param(lambda ids: [{"id": i, "action": "delete"} for i in ids], id="wipe"),
    ],
)
async def test_a_destructive_answer_fails_the_run_retryably_and_writes_nothing(
    cluster: Cluster, llm: Any, project: str, existing: Any
) -> None:
    await cluster.engine.put_group(project, "prefs", RECONCILED)
    body = {"group": "prefs", "user_id": "g"}
    seeded = await finished(
        cluster, project, {**body, "input": facts(*(("UserKnowledge", k) for k in KNOWN))}
    )
    assert seeded.status == "completed", seeded.error
    before = sorted((m.id, m.content, m.updated_at) for m in await listed(cluster, project, **body))
    llm.script("extract", {"memories": [{"topic": "UserKnowledge", "content": "User likes jazz."}]})

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        import json

        user = next(m for m in request["messages"] if m["role"] == "user")
        shown = [m["id"] for m in json.loads(user["content"])["existing"]]
        return {"existing": existing(shown), "new": [{"index": 0, "action": "keep"}]}

    llm.script("transform_with_context", answer)
    run = await finished(cluster, project, {
        **body, "input": {"string": {"content": ["I like jazz."]}}})  # fmt: skip
    assert run.status == "failed", run.committed_operations
    assert run.error and "nothing was written, retry the run" in run.error
    after = sorted((m.id, m.content, m.updated_at) for m in await listed(cluster, project, **body))
    assert after == before
    llm.script("transform_with_context", {"existing": [], "new": [{"index": 0, "action": "keep"}]})
    await cluster.engine.retry_run(project, run.run_id)
    again = await cluster.engine.wait_run(project, run.run_id, 60)
    assert again.status == "completed", again.error
    assert "User likes jazz." in [m.content for m in await listed(cluster, project, **body)]


async def test_expired_memories_leave_search_and_list(cluster: Cluster, project: str) -> None:
    await cluster.engine.put_group(project, "story", APPEND_ONLY)
    scope = {"group": "story", "user_id": "e"}
    items = [("Trips", "User flew to Oslo in May."), ("Trips", "User booked a trip to Rome."),
             ("Moods", "User felt tired in Oslo."), ("Facts", "User lives in Oslo.")]  # fmt: skip
    run = await finished(cluster, project, {**scope, "input": facts(*items)})
    assert run.status == "completed", run.error
    async with cluster.engine.db.begin() as conn:
        for content, days in (("User flew to Oslo in May.", 31), ("User booked a trip to Rome.", 29),
                              ("User felt tired in Oslo.", 11), ("User lives in Oslo.", 400)):  # fmt: skip
            await conn.execute(text(
                "UPDATE memories SET updated_at = updated_at - make_interval(days => :d) "
                "WHERE project = :p AND content = :c"), {"d": days, "p": project, "c": content})  # fmt: skip
    live = {"User booked a trip to Rome.", "User lives in Oslo."}
    assert {m.content for m in await listed(cluster, project, **scope)} == live
    for mode in ("vector", "bm25", "hybrid", "fetch"):
        hits = await searched(cluster, project, "Oslo trip tired", mode, **scope)
        assert {h.content for h in hits} <= live, mode
    gone = await listed(cluster, project, include_consolidated=True, **scope)
    assert {m.content for m in gone} == live  # expiry is not consolidation
    async with cluster.engine.db.connect() as conn:
        [expired_id] = (await conn.execute(text(
            "SELECT id FROM memories WHERE project = :p AND content = 'User flew to Oslo in May.'"),
            {"p": project})).scalars().all()  # fmt: skip
    assert await cluster.engine.expired_memory_ids(project, "story", [expired_id]) == {expired_id}
    found = await cluster.engine.memory_provenance(project, "story", "e", expired_id)
    assert found is not None and found.versions  # still reachable by id


async def test_a_placeholder_rule_fails_the_pass_and_writes_nothing(
    cluster: Cluster, llm: Any, project: str
) -> None:
    """The consolidation guard in the committer service: a placeholder rule is refused, the
    scope records the error and keeps its episodes for the next trigger."""
    import asyncio

    from tests.support.dynamics import DESK, EPISODES, LUTHIER_GROUP

    at_desk = {"group": "luthier", "user_id": "luthier-1", "properties": {"desk_id": DESK}}
    await cluster.engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", {"rule": "N/A", "used": None})
    for content in EPISODES:
        run = await finished(cluster, project, {**at_desk, "input": facts(("Episodes", content))})
        assert run.status == "completed", run.error
    deadline = asyncio.get_running_loop().time() + 60
    while not any(
        s.last_error for s in await cluster.engine.consolidation_scopes(project, "luthier")
    ):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.3)
    [scope] = await cluster.engine.consolidation_scopes(project, "luthier")
    assert "nothing was written, retry the run" in (scope.last_error or "")
    assert scope.new_episodes > 0
    assert await listed(cluster, project, topics=["Rules"], **at_desk) == []
    assert sorted(m.content for m in await listed(cluster, project, **at_desk)) == sorted(EPISODES)


async def test_a_gate_answer_naming_an_id_not_shown_fails_the_run(
    cluster: Cluster, llm: Any, project: str
) -> None:
    from tests.support.dynamics import (
        BENCH,
        CORRECTION,
        CORRECTION_QUOTE,
        DARKROOM_GROUP,
        EXTRACTED,
        GRADE_2,
        GRADE_4,
        conversation,
        extract_as,
        verdict,
    )

    printer = {"group": "darkroom", "user_id": "printer-1", "properties": {"bench_id": BENCH}}
    await cluster.engine.put_group(project, "darkroom", DARKROOM_GROUP)
    seeded = await finished(cluster, project, {**printer, "input": facts(("Rules", GRADE_2))})
    assert seeded.committed_operations is not None
    rule = seeded.committed_operations.created[0].memory_id
    assert [
        m.id for m in await searched(cluster, project, "muddy midtones", "hybrid", **printer)
    ] == [rule]
    llm.script("extract", extract_as(EXTRACTED))
    llm.script("reconsolidate", verdict("not-shown", "contradict", CORRECTION_QUOTE, GRADE_4))
    body = {**printer, "input": conversation(("assistant", GRADE_2), ("user", CORRECTION))}
    run = await finished(cluster, project, body)
    assert run.status == "failed" and "nothing was written, retry the run" in (run.error or "")
    assert [m.content for m in await listed(cluster, project, **printer)] == [GRADE_2]
    assert await cluster.engine.memory_history(project, "darkroom", "printer-1", rule) == []
