"""Example 4 (consolidation) in the embedded mode, with the LLM's answers scripted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mnemo import metrics
from mnemo.core.engine import Engine
from mnemo.domain.memory import Memory, MemoryStatus
from tests.integration.engine.helpers import add_and_wait, listing, search
from tests.support.dynamics import (
    CONTRARY_EPISODE,
    DESK,
    EPISODES,
    LATE_EPISODE,
    LUTHIER_GROUP,
    QUESTION,
    RULE,
    RULE_V2,
    consolidate_answer,
    facts,
    user_body,
)
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
AT_DESK = {"group": "luthier", "user_id": "luthier-1", "properties": {"desk_id": DESK}}


async def episode(engine: Engine, project: str, content: str, **scope: Any) -> str:
    run = await add_and_wait(
        engine, project, {**(scope or AT_DESK), "input": facts("Episodes", content)}
    )
    assert run.status == "completed", run.error
    assert run.committed_operations is not None
    return run.committed_operations.created[0].memory_id


async def rules(engine: Engine, project: str, **scope: Any) -> list[Memory]:
    where = scope or {"user_id": "luthier-1", "properties": {"desk_id": DESK}}
    return await listing(engine, project, group="luthier", topics=["Rules"], **where)


async def settled(engine: Engine, project: str, rule_content: str, timeout: float = 20) -> Memory:
    """The one rule once it says `rule_content` (passes run after the episodes' commits)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await rules(engine, project)
        if found and found[0].content == rule_content:
            assert len(found) == 1, [m.content for m in found]
            return found[0]
        assert asyncio.get_running_loop().time() < deadline, [m.content for m in found]
        await asyncio.sleep(0.1)


async def test_episodes_become_one_rule_reachable_through_its_sources(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", consolidate_answer)
    ids = [await episode(engine, project, text) for text in EPISODES[:2]]
    await asyncio.sleep(0.5)  # two passes ran (count 1): a cluster of two is not a rule
    assert llm.calls_for("consolidate") == [] and await rules(engine, project) == []
    ids.append(await episode(engine, project, EPISODES[2]))
    rule = await settled(engine, project, RULE)

    [call] = llm.calls_for("consolidate")
    assert [e["content"] for e in user_body(call)["new_episodes"]] == EPISODES
    # The episodes left default search and list ...
    assert [m.id for m in await search(engine, project, "wolf bridge", **AT_DESK)] == [rule.id]
    listed = await listing(engine, project, **AT_DESK)
    assert [m.id for m in listed] == [rule.id]
    # ... but the rule's sources and include_consolidated still reach them.
    sources = await engine.memory_sources(project, "luthier", "luthier-1", rule.id)
    assert [m.id for m in sources] == ids
    assert {m.status for m in sources} == {MemoryStatus.consolidated}
    assert {m.consolidated_into for m in sources} == {rule.id}
    # Provenance names the pass that wrote the rule and the episodes it was made from.
    origin = await engine.memory_provenance(project, "luthier", "luthier-1", rule.id)
    [written] = origin.versions
    assert sorted(written.sources) == sorted(ids) and written.run is None
    assert written.run_id and written.run_id.startswith("consolidation-")
    assert origin.run_ids == []
    everything = await listing(engine, project, include_consolidated=True, **AT_DESK)
    marked = {m.id: m.consolidated_into for m in everything}
    assert marked == {rule.id: None, **{i: rule.id for i in ids}}
    found = await search(engine, project, "wolf", include_consolidated=True, **AT_DESK)
    assert {m.id for m in found} >= set(ids)
    # A new, related question retrieves the rule first.
    assert (await search(engine, project, QUESTION, **AT_DESK))[0].id == rule.id


async def test_a_later_episode_rewrites_the_rule_with_history(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", consolidate_answer)
    for text in EPISODES:
        await episode(engine, project, text)
    rule = await settled(engine, project, RULE)
    late = await episode(engine, project, CONTRARY_EPISODE)
    again = await settled(engine, project, RULE_V2)

    assert again.id == rule.id  # no second rule
    _, second = llm.calls_for("consolidate")
    assert user_body(second)["current_rule"] == RULE
    assert [e["content"] for e in user_body(second)["new_episodes"]] == [CONTRARY_EPISODE]
    history = await engine.memory_history(project, "luthier", "luthier-1", rule.id)
    assert [v.content for v in history] == [RULE]
    assert history[0].run_id is not None and history[0].run_id.startswith("consolidation-")
    sources = await engine.memory_sources(project, "luthier", "luthier-1", rule.id)
    assert sources[-1].id == late and len(sources) == 4


async def test_a_later_episode_the_rule_covers_is_linked_without_a_call(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    """Issue 32 (calls per add): one more instance of what the rule rests on, saying nothing
    by way of contrast, joins the rule as a source; the rule is not rewritten."""
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", consolidate_answer)
    for text in EPISODES:
        await episode(engine, project, text)
    rule = await settled(engine, project, RULE)
    linked = metrics.CONSOLIDATION_PASSES.labels(outcome="rule_linked")._value.get()
    late = await episode(engine, project, LATE_EPISODE)
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        sources = await engine.memory_sources(project, "luthier", "luthier-1", rule.id)
        if len(sources) == 4:
            break
        assert asyncio.get_running_loop().time() < deadline, [m.content for m in sources]
        await asyncio.sleep(0.1)
    assert sources[-1].id == late and sources[-1].status == MemoryStatus.consolidated
    assert len(llm.calls_for("consolidate")) == 1  # the rule's creation only
    assert metrics.CONSOLIDATION_PASSES.labels(outcome="rule_linked")._value.get() == linked + 1
    [same] = await rules(engine, project)
    assert (same.id, same.content) == (rule.id, RULE)
    assert await engine.memory_history(project, "luthier", "luthier-1", rule.id) == []
    assert [m.id for m in await listing(engine, project, **AT_DESK)] == [rule.id]


async def test_scopes_do_not_mix(engine: Engine, llm: ScriptedLLMServer, project: str) -> None:
    """Two episodes at this desk and one by another luthier or at another desk never make a
    cluster of three."""
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", consolidate_answer)
    await episode(engine, project, EPISODES[0])
    await episode(engine, project, EPISODES[1])
    other_user = {**AT_DESK, "user_id": "luthier-2"}
    other_desk = {**AT_DESK, "properties": {"desk_id": "cello-desk-2"}}
    await episode(engine, project, EPISODES[2], **other_user)
    await episode(engine, project, EPISODES[2], **other_desk)
    await asyncio.sleep(1.0)
    assert llm.calls_for("consolidate") == []
    scopes = await engine.consolidation_scopes(project, "luthier")
    assert sorted((s.user_id, s.properties["desk_id"]) for s in scopes) == [
        ("luthier-1", "cello-desk-2"),
        ("luthier-1", DESK),
        ("luthier-2", DESK),
    ]
    assert all(s.last_pass_at is not None and s.new_episodes == 0 for s in scopes)


async def test_a_failed_pass_is_recorded_and_retried(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.fail("consolidate", status=400, times=1)  # a client error: not retried by the client
    for text in EPISODES:
        await episode(engine, project, text)
    deadline = asyncio.get_running_loop().time() + 20
    while not any(s.last_error for s in await engine.consolidation_scopes(project, "luthier")):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.1)
    [scope] = await engine.consolidation_scopes(project, "luthier")
    assert "400" in (scope.last_error or "") and scope.new_episodes == 1  # kept for a retry
    llm.script("consolidate", consolidate_answer)
    await episode(engine, project, LATE_EPISODE)  # the next trigger retries the pass
    rule = await settled(engine, project, RULE)
    assert len(await engine.memory_sources(project, "luthier", "luthier-1", rule.id)) == 4
    [scope] = await engine.consolidation_scopes(project, "luthier")
    assert scope.last_error is None and scope.new_episodes == 0


async def test_erasing_a_rule_releases_its_sources(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", consolidate_answer)
    ids = [await episode(engine, project, text) for text in EPISODES]
    rule = await settled(engine, project, RULE)
    await engine.erase_memory(project, "luthier", "luthier-1", rule.id)
    back = await listing(engine, project, **AT_DESK)
    assert sorted(m.id for m in back) == sorted(ids)
    assert all(m.status is None and m.consolidated_into is None for m in back)
