"""User isolation is hard in every retrieval mode; group and project isolation too."""

from __future__ import annotations

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.requests import InvalidRequest, NotFound
from tests.integration.engine.helpers import add_and_wait, facts, search

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("mode", ["vector", "bm25", "hybrid", "fetch"])
async def test_users_never_see_each_other(engine: Engine, project: str, mode: str) -> None:
    alice = await add_and_wait(
        engine,
        project,
        {
            "user_id": "Alice",
            "input": facts(
                ("UserKnowledge", "User keeps bees on the roof."),
                ("UserProfile", "Alice, beekeeper in Lyon."),
            ),
        },
    )
    await add_and_wait(
        engine,
        project,
        {"user_id": "bob", "input": facts(("UserKnowledge", "User plays the cello."))},
    )
    alice_ids = {o.memory_id for o in alice.committed_operations.created}  # type: ignore[union-attr]
    for query in ("bees roof beekeeper Lyon", "cello"):
        seen_by_bob = await search(engine, project, query, mode, user_id="BOB")
        assert not alice_ids & {m.id for m in seen_by_bob}
    seen_by_alice = await search(engine, project, "bees roof beekeeper Lyon", mode, user_id="alice")
    assert {m.id for m in seen_by_alice} <= alice_ids and seen_by_alice


async def test_user_scoped_search_needs_user_id(engine: Engine, project: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        await search(engine, project, "anything")
    assert refused.value.errors[0].location == "body.user_id"


async def test_get_and_delete_do_not_cross_users_groups_or_projects(
    engine: Engine, project: str
) -> None:
    run = await add_and_wait(
        engine,
        project,
        {"user_id": "carol", "input": facts(("UserKnowledge", "User is allergic to peanuts."))},
    )
    memory_id = run.committed_operations.created[0].memory_id  # type: ignore[union-attr]
    assert (await engine.get_memory(project, "default", "CAROL", memory_id)).user_id == "carol"
    await engine.put_group(project, "other", {"template": "default"})
    # Users each project knows (from an add): 404, exactly as for a missing memory.
    for known in ((project, "dave"), (project + "-x", "carol")):
        await add_and_wait(engine, known[0], {"user_id": known[1],
                                              "input": facts(("UserKnowledge", "Likes tea."))})  # fmt: skip
    for owner in (
        (project, "default", "dave"),
        (project, "other", "carol"),
        (project + "-x", "default", "carol"),
    ):
        with pytest.raises(NotFound):
            await engine.get_memory(*owner, memory_id)
        with pytest.raises(NotFound):
            await engine.delete_memory(*owner, memory_id)
    # A user the project has never seen: Engram's 422, which says nothing of the memory.
    for call in (engine.get_memory, engine.delete_memory):
        with pytest.raises(InvalidRequest) as caught:
            await call(project, "default", "frank", memory_id)
        assert caught.value.kind == "unprocessable"  # answered 422
        assert [e.location for e in caught.value.errors] == ["query.user_id"]
    await engine.delete_memory(project, "default", "carol", memory_id)
    with pytest.raises(NotFound):
        await engine.get_memory(project, "default", "carol", memory_id)


async def test_erase_user_removes_memories_and_history(engine: Engine, project: str) -> None:
    run = await add_and_wait(
        engine, project, {"user_id": "erin", "input": facts(("UserProfile", "Erin, nurse."))}
    )
    memory_id = run.committed_operations.created[0].memory_id  # type: ignore[union-attr]
    await add_and_wait(
        engine, project, {"user_id": "erin", "input": facts(("UserProfile", "Erin, head nurse."))}
    )
    assert len(await engine.memory_history(project, "default", "erin", memory_id)) == 1
    report = await engine.erase_user(project, "ERIN")
    assert (report.erased, report.memories, report.versions) == (1, 1, 1)
    assert (report.runs_redacted, report.runs_stopped) == (2, 0)
    with pytest.raises(NotFound):
        await engine.memory_history(project, "default", "erin", memory_id)


async def test_property_filters_narrow_only_topics_scoped_by_them(
    engine: Engine, project: str
) -> None:
    await engine.put_group(project, "chat", {"template": "personalization"})
    for conversation in ("c1", "c2"):
        await add_and_wait(
            engine,
            project,
            {
                "group": "chat",
                "user_id": "u1",
                "properties": {"conversation_id": conversation, "client": "web"},
                "input": facts(
                    ("ConversationSummary", f"Summary of {conversation}."),
                    ("UserKnowledge", f"User mentioned {conversation}."),
                ),
            },
        )
    scoped = await search(
        engine,
        project,
        "summary mentioned",
        "bm25",
        group="chat",
        user_id="u1",
        properties={"conversation_id": "c1"},
    )
    # UserKnowledge is not scoped by conversation_id: the filter leaves it whole.
    assert sorted((m.content, m.properties) for m in scoped) == [
        ("Summary of c1.", {"conversation_id": "c1"}),
        ("User mentioned c1.", None),
        ("User mentioned c2.", None),
    ]
    cleared = await search(
        engine,
        project,
        "summary mentioned",
        "bm25",
        group="chat",
        user_id="u1",
        properties={"conversation_id": "c1"},
        topics=[
            {"name": "ConversationSummary", "properties": {"conversation_id": None}},
            {"name": "UserKnowledge", "properties": {"conversation_id": None}},
        ],
    )
    assert sorted(m.content for m in cleared) == [
        "Summary of c1.",
        "Summary of c2.",
        "User mentioned c1.",
        "User mentioned c2.",
    ]
    with pytest.raises(InvalidRequest) as refused:
        await search(
            engine,
            project,
            "mentioned",
            group="chat",
            user_id="u1",
            topics=[
                "ConversationSummary",
                {"name": "UserKnowledge", "properties": {"client": "web"}},
            ],
        )
    assert [(e.location, e.value) for e in refused.value.errors] == [
        ("body.topics[1].properties.client", "web")
    ]
