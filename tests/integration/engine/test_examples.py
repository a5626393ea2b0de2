"""The behaviour examples of shared/examples.md, with the LLM's answers scripted."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.core.engine import Engine
from tests.integration.conftest import user_payload
from tests.integration.engine.helpers import add, add_and_wait, chat, facts, listing, says, search
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


async def test_promotion_rewrites_with_history(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    seeded = await add_and_wait(
        engine,
        project,
        {
            "user_id": "u1",
            "input": facts(
                ("UserKnowledge", "User works as a machine learning engineer."),
                ("UserKnowledge", "User works from home."),
            ),
        },
    )
    m1, m2 = (op.memory_id for op in seeded.committed_operations.created)  # type: ignore[union-attr]

    llm.script(
        "extract",
        {"memories": [{"topic": "UserKnowledge", "content": "User has been promoted to CEO."}]},
    )

    def reconcile(request: dict[str, Any]) -> dict[str, Any]:
        body = user_payload(request)
        assert {m["id"] for m in body["existing"]} == {m1, m2}
        return {
            "existing": [
                {
                    "id": m1,
                    "action": "rewrite",
                    "content": "The user used to work as a machine "
                    "learning engineer, but has now been promoted to CEO.",
                },
                {"id": m2, "action": "keep"},
            ],
            "new": [{"index": 0, "action": "delete"}],
        }

    llm.script("transform_with_context", reconcile)
    run = await add_and_wait(
        engine,
        project,
        {
            "user_id": "u1",
            "input": chat(("user", "Great news, my efforts paid off, I got promoted to CEO!")),
        },
    )

    assert run.status == "completed"
    ops = run.committed_operations
    assert ops is not None and [o.memory_id for o in ops.updated] == [m1]
    assert ops.created == [] and ops.deleted == []
    live = {m.id: m.content for m in await listing(engine, project, user_id="u1")}
    assert set(live) == {m1, m2}
    assert "promoted to CEO" in live[m1] and live[m2] == "User works from home."
    history = await engine.memory_history(project, "default", "u1", m1)
    assert [v.content for v in history] == ["User works as a machine learning engineer."]
    assert history[0].change == "updated" and history[0].run_id == run.run_id


async def test_continual_learning_buffers_until_feedback(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await engine.put_group(project, "learning", {"template": "continual_learning"})
    fragments = {
        "comedy movies": ("task_goal", "The user asked for comedy movies."),
        "near-text": ("actions_taken", "The search agent ran a near-text search for 'comedy'."),
        "genres property": ("feedback", "Comedy is a genre: filter on the genres property."),
    }

    def extract(request: dict[str, Any]) -> dict[str, Any]:
        text = " ".join(user_payload(request)["input"])
        topic, content = next(v for k, v in fragments.items() if k in text)
        return {"memories": [{"topic": topic, "content": content}]}

    lesson = (
        "When asked for movies of a genre (e.g. comedy), filter on the genres property "
        "instead of a near-text query."
    )
    llm.script("extract", extract)
    llm.script("transform", {"memories": [{"topic": "experience", "content": lesson}]})
    base = {"group": "learning", "user_id": "agent-owner"}

    first = await add(engine, project, {**base, "input": says("User: find me comedy movies")})
    second = await add(
        engine, project, {**base, "input": says("Sub-agent ran a near-text search for comedy")}
    )
    for run in (first, second):
        waited = await engine.wait_run(project, run.run_id, 1.0)
        assert waited.status == "in_buffer"
    for topic in ("task_goal", "actions_taken", "feedback", "experience"):
        assert (
            await search(
                engine, project, "comedy", group="learning", topics=[topic], user_id="agent-owner"
            )
            == []
        )

    third = await add_and_wait(
        engine,
        project,
        {**base, "input": says("Feedback: comedy is a genre, filter on the genres property")},
    )
    for run in (first, second):
        assert (await engine.wait_run(project, run.run_id, 10)).status == "completed"
    assert third.status == "completed"
    transform_call = llm.calls_for("transform")[0]
    assert len(user_payload(transform_call)["memories"]) == 3
    found = await listing(engine, project, group="learning", user_id="agent-owner")
    assert [(m.topic, m.content) for m in found] == [("experience", lesson)]
    assert (
        await search(
            engine,
            project,
            "near-text comedy",
            group="learning",
            topics=["task_goal", "actions_taken", "feedback"],
        )
        == []
    )


async def test_bounded_profile_is_updated_in_place(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    def extract(request: dict[str, Any]) -> dict[str, Any]:
        line = user_payload(request)["input"][0]
        current = ""
        for brief in request["messages"][0]["content"].splitlines():
            if brief.strip().startswith("current:"):
                current = brief.split("current:", 1)[1].strip()
        return {"memories": [{"topic": "UserProfile", "content": f"{current} {line}".strip()}]}

    llm.script("extract", extract)
    ids = set()
    for i in range(10):
        run = await add_and_wait(engine, project, {"user_id": "Ann", "input": says(f"fact-{i}.")})
        ops = run.committed_operations
        assert ops is not None
        ids |= {o.memory_id for o in ops.created + ops.updated}
    assert len(ids) == 1
    profile = await search(
        engine, project, "ignored", mode="fetch", user_id="ann", topics=["UserProfile"]
    )
    assert len(profile) == 1 and profile[0].id in ids
    assert all(f"fact-{i}." in profile[0].content for i in range(10))
    assert len(await engine.memory_history(project, "default", "ann", profile[0].id)) == 9


async def test_conversation_summaries_never_cross(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await engine.put_group(project, "chat", {"template": "personalization"})

    def extract(request: dict[str, Any]) -> dict[str, Any]:
        line = user_payload(request)["input"][-1]
        return {"memories": [{"topic": "ConversationSummary", "content": f"Summary: {line}"}]}

    llm.script("extract", extract)
    for conversation, text in (
        ("c1", "we discussed tea"),
        ("c2", "we discussed chess"),
        ("c1", "we discussed green tea"),
    ):
        await add_and_wait(
            engine,
            project,
            {
                "group": "chat",
                "user_id": "u1",
                "properties": {"conversation_id": conversation},
                "input": chat(("user", text)),
            },
        )
    both = await listing(
        engine, project, group="chat", user_id="u1", topics=["ConversationSummary"]
    )
    assert sorted(m.content for m in both) == [
        "Summary: user: we discussed chess",
        "Summary: user: we discussed green tea",
    ]
    only_c2 = await search(
        engine,
        project,
        "x",
        mode="fetch",
        group="chat",
        user_id="u1",
        topics=["ConversationSummary"],
        properties={"conversation_id": "c2"},
    )
    assert [m.content for m in only_c2] == ["Summary: user: we discussed chess"]


async def test_preference_change_supersedes(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    first = await add_and_wait(
        engine,
        project,
        {"user_id": "u9", "input": facts(("UserKnowledge", "User prefers dark mode."))},
    )
    old_id = first.committed_operations.created[0].memory_id  # type: ignore[union-attr]
    llm.script(
        "extract", {"memories": [{"topic": "UserKnowledge", "content": "User prefers light mode."}]}
    )
    llm.script(
        "transform_with_context",
        {"existing": [{"id": old_id, "action": "delete"}], "new": [{"index": 0, "action": "keep"}]},
    )
    second = await add_and_wait(
        engine, project, {"user_id": "u9", "input": says("I prefer light mode now")}
    )
    ops = second.committed_operations
    assert ops is not None and [o.memory_id for o in ops.deleted] == [old_id]
    assert [m.content for m in await listing(engine, project, user_id="u9")] == [
        "User prefers light mode."
    ]
    history = await engine.memory_history(project, "default", "u9", old_id)
    assert [(v.content, v.change) for v in history] == [("User prefers dark mode.", "deleted")]
