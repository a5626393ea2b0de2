"""Issue 32: the guards on consolidate and reconsolidate answers (`core.answer_guards`).

The scripted OpenAI-compatible server plays a model whose answer names ids it was not shown,
or rewrites a memory (a rule, a recalled memory) to empty or placeholder text. The answer is
refused as a whole and nothing of it is written:
- a reconsolidate answer fails the run, retryably (its raw input is kept, a retry with a sane
  answer commits);
- a consolidate answer fails the pass: the scope records the error and keeps its new
  episodes, so the next trigger retries it.
Neither answer can delete a memory (the gate only rewrites; consolidation only writes rules
and links their sources), so the share guard (`MNEMO_DESTRUCTIVE_MAX_SHARE`) is reconcile's
alone (tests/integration/engine/test_answer_guards.py); emptying a memory is refused here
whatever the share. Both are shared step code, the same in both modes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mnemo.core.engine import Engine
from tests.integration.engine.helpers import add_and_wait, listing
from tests.integration.engine.test_consolidation import AT_DESK, episode, rules, settled
from tests.integration.engine.test_reconsolidation import PRINTER, content_of, recall, seeded
from tests.support.dynamics import (
    CONTRARY_EPISODE,
    CORRECTION,
    CORRECTION_QUOTE,
    EPISODES,
    EXTRACTED,
    GRADE_2,
    GRADE_4,
    LUTHIER_GROUP,
    RULE,
    conversation,
    extract_as,
    user_body,
    verdict,
)
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
REFUSED = "nothing was written, retry the run"


# -- reconsolidate -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(lambda rule: verdict("not-shown", "contradict", CORRECTION_QUOTE, GRADE_4),
                     id="id-not-shown"),
        pytest.param(lambda rule: verdict(rule, "contradict", CORRECTION_QUOTE, "N/A"),
                     id="placeholder"),
        pytest.param(lambda rule: verdict(rule, "extend", CORRECTION_QUOTE, "[deleted]"),
                     id="placeholder-extend"),
        pytest.param(lambda rule: verdict(rule, "contradict", CORRECTION_QUOTE, "  "), id="empty"),
    ],
)  # fmt: skip
async def test_a_destructive_gate_answer_fails_the_run_and_writes_nothing(
    engine: Engine, llm: ScriptedLLMServer, project: str, answer: Any
) -> None:
    rule = await seeded(engine, project)
    assert await recall(engine, project) == [rule]
    llm.script("extract", extract_as(EXTRACTED))
    llm.script("reconsolidate", answer(rule))
    llm.script("transform_with_context", {"existing": [], "new": [{"index": 0, "action": "keep"}]})
    body = {**PRINTER, "input": conversation(("assistant", GRADE_2), ("user", CORRECTION))}
    run = await add_and_wait(engine, project, body)

    assert run.status == "failed", run.committed_operations
    assert run.error and REFUSED in run.error and "reconsolidate" in run.error
    assert await content_of(engine, project, rule) == GRADE_2
    assert await engine.memory_history(project, "darkroom", "printer-1", rule) == []
    assert [m.id for m in await listing(engine, project, **PRINTER)] == [rule]
    # Retryable: the raw input is kept; a sane answer the second time commits.
    llm.script("reconsolidate", verdict(rule, "contradict", CORRECTION_QUOTE, GRADE_4))
    await engine.retry_run(project, run.run_id)
    again = await engine.wait_run(project, run.run_id, 20)
    assert again.status == "completed", again.error
    assert await content_of(engine, project, rule) == GRADE_4


# -- consolidate ---------------------------------------------------------------------------


async def failed_pass(engine: Engine, project: str) -> Any:
    """The scope once a pass recorded an error."""
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        scopes = await engine.consolidation_scopes(project, "luthier")
        failed = [s for s in scopes if s.last_error]
        if failed:
            return failed[0]
        assert asyncio.get_running_loop().time() < deadline, scopes
        await asyncio.sleep(0.1)


def new_rule_answer(rule: str | None, used: Any = None) -> Any:
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        ids = [e["id"] for e in user_body(request)["new_episodes"]]
        return {"rule": rule, "used": used(ids) if callable(used) else used}

    return respond


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(new_rule_answer(RULE, lambda ids: [*ids, "not-shown"]), id="id-not-shown"),
        pytest.param(new_rule_answer("N/A"), id="placeholder"),
        pytest.param(new_rule_answer("<rule>"), id="placeholder-brackets"),
    ],
)
async def test_a_destructive_consolidate_answer_fails_the_pass_and_writes_nothing(
    engine: Engine, llm: ScriptedLLMServer, project: str, answer: Any
) -> None:
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", answer)
    ids = [await episode(engine, project, text) for text in EPISODES]
    scope = await failed_pass(engine, project)

    assert REFUSED in (scope.last_error or "") and "consolidate" in (scope.last_error or "")
    assert scope.new_episodes > 0  # kept: the next trigger retries the pass
    assert await rules(engine, project) == []
    listed = await listing(engine, project, **AT_DESK)
    assert sorted(m.id for m in listed) == sorted(ids)  # the episodes are still active
    assert all(m.consolidated_into is None for m in listed)


def rewrite_answer(rewrite: Any) -> Any:
    """RULE for the first pass; `rewrite(new episode ids)` for the rewrite of RULE."""

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        body = user_body(request)
        if "current_rule" not in body:
            return {"rule": RULE, "used": None}
        return rewrite([e["id"] for e in body["new_episodes"]])

    return respond


@pytest.mark.parametrize(
    "rewrite",
    [
        pytest.param(lambda ids: {"rule": RULE + " Also fine.", "used": ["not-shown"]},
                     id="id-not-shown"),
        pytest.param(lambda ids: {"rule": "[deleted]", "used": ids}, id="placeholder"),
        pytest.param(lambda ids: {"rule": "...", "used": None}, id="placeholder-dots"),
    ],
)  # fmt: skip
async def test_a_destructive_rule_rewrite_is_refused_and_the_rule_stands(
    engine: Engine, llm: ScriptedLLMServer, project: str, rewrite: Any
) -> None:
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", rewrite_answer(rewrite))
    for text in EPISODES:
        await episode(engine, project, text)
    rule = await settled(engine, project, RULE)
    late = await episode(engine, project, CONTRARY_EPISODE)
    scope = await failed_pass(engine, project)

    assert REFUSED in (scope.last_error or "")
    [same] = await rules(engine, project)
    assert (same.id, same.content) == (rule.id, RULE)
    assert await engine.memory_history(project, "luthier", "luthier-1", rule.id) == []
    sources = await engine.memory_sources(project, "luthier", "luthier-1", rule.id)
    assert late not in [m.id for m in sources]
    assert late in [m.id for m in await listing(engine, project, **AT_DESK)]  # still active


async def test_an_empty_rule_rewrite_writes_nothing(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    """An empty or null rewrite means the episodes teach nothing to add: the rule stands as
    it was (never emptied), and the episode stays active on its own."""
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", rewrite_answer(lambda ids: {"rule": "", "used": ids}))
    for text in EPISODES:
        await episode(engine, project, text)
    rule = await settled(engine, project, RULE)
    late = await episode(engine, project, CONTRARY_EPISODE)
    deadline = asyncio.get_running_loop().time() + 20
    while len(llm.calls_for("consolidate")) < 2:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)  # the pass commits after its call
    [same] = await rules(engine, project)
    assert (same.id, same.content) == (rule.id, RULE)
    assert await engine.memory_history(project, "luthier", "luthier-1", rule.id) == []
    assert late in [m.id for m in await listing(engine, project, **AT_DESK)]
