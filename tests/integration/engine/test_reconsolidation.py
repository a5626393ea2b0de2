"""Example 5 (reconsolidation) and its thrash guards in the embedded mode, LLM scripted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.memory import Run
from mnemo.store import recalls
from tests.integration.engine.helpers import add_and_wait, listing, search
from tests.support.dynamics import (
    BENCH,
    CORRECTION,
    CORRECTION_QUOTE,
    DARKROOM_GROUP,
    EXTRACTED,
    GRADE_2,
    GRADE_4,
    RESTATEMENT,
    conversation,
    extract_as,
    facts,
    user_body,
    verdict,
)
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
PRINTER = {"group": "darkroom", "user_id": "printer-1", "properties": {"bench_id": BENCH}}


async def seeded(engine: Engine, project: str) -> str:
    await engine.put_group(project, "darkroom", DARKROOM_GROUP)
    run = await add_and_wait(engine, project, {**PRINTER, "input": facts("Rules", GRADE_2)})
    assert run.committed_operations is not None
    return run.committed_operations.created[0].memory_id


async def recall(engine: Engine, project: str, **scope: Any) -> list[str]:
    found = await search(engine, project, "muddy midtones multigrade", **(scope or PRINTER))
    return [m.id for m in found]


async def turn(engine: Engine, project: str, said: str, **extra: Any) -> Run:
    body = {**PRINTER, **extra, "input": conversation(("assistant", GRADE_2), ("user", said))}
    run = await add_and_wait(engine, project, body)
    assert run.status == "completed", run.error
    return await engine.get_run(project, run.run_id)


async def content_of(engine: Engine, project: str, memory_id: str) -> str:
    return (await engine.get_memory(project, "darkroom", "printer-1", memory_id)).content


async def test_a_recalled_rule_is_corrected_with_history(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    rule = await seeded(engine, project)
    assert await recall(engine, project) == [rule]
    llm.script("extract", extract_as(EXTRACTED))

    def gate(request: dict[str, Any]) -> dict[str, Any]:
        body = user_body(request)
        assert [m["id"] for m in body["recalled"]] == [rule]
        assert f"user: {CORRECTION}" in body["input"]
        return verdict(rule, "contradict", CORRECTION_QUOTE, GRADE_4)

    llm.script("reconsolidate", gate)
    run = await turn(engine, project, CORRECTION)

    ops = run.committed_operations
    assert ops is not None and [o.memory_id for o in ops.updated] == [rule]
    assert ops.created == [] and ops.deleted == []
    assert run.reconsolidation is not None
    [decision] = run.reconsolidation
    assert (decision.memory_id, decision.decision, decision.applied) == (rule, "contradict", True)
    assert decision.evidence == CORRECTION_QUOTE
    assert llm.calls_for("transform_with_context") == []  # the gate covered the new memory
    history = await engine.memory_history(project, "darkroom", "printer-1", rule)
    assert [(v.content, v.run_id) for v in history] == [(GRADE_2, run.run_id)]
    current = await search(engine, project, "which grade for muddy midtones?", **PRINTER)
    assert [m.content for m in current] == [GRADE_4]


async def test_a_restatement_writes_nothing(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    rule = await seeded(engine, project)
    await recall(engine, project)
    llm.script("extract", extract_as("Use grade 4 for muddy midtones as usual."))
    llm.script("reconsolidate", verdict(rule, "match", RESTATEMENT))
    run = await turn(engine, project, RESTATEMENT)

    ops = run.committed_operations
    assert ops is not None and ops.created == ops.updated == ops.deleted == []
    assert run.reconsolidation is not None
    [decision] = run.reconsolidation
    assert (decision.decision, decision.applied) == ("match", False)
    assert await engine.memory_history(project, "darkroom", "printer-1", rule) == []
    assert [m.id for m in await listing(engine, project, **PRINTER)] == [rule]


async def test_a_fabricated_quote_is_refused(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    rule = await seeded(engine, project)
    await recall(engine, project)
    llm.script("extract", extract_as("Use grade 3 for muddy midtones."))
    llm.script("reconsolidate", verdict(rule, "contradict", "always use grade 5", "Grade 5."))
    # Reconcile may not write the rule either: with only_recalled it is the gate's to change,
    # and the gate refused.
    llm.script(
        "transform_with_context",
        {"existing": [{"id": rule, "action": "rewrite", "content": "Grade 5."}],
         "new": [{"index": 0, "action": "keep"}]},
    )  # fmt: skip
    run = await turn(engine, project, "Hmm, use grade 3 this time.")

    assert run.reconsolidation is not None
    [decision] = run.reconsolidation
    assert decision.applied is False and decision.reason == "evidence not found in the input"
    assert await content_of(engine, project, rule) == GRADE_2
    assert await engine.memory_history(project, "darkroom", "printer-1", rule) == []
    [reconcile] = llm.calls_for("transform_with_context")
    assert user_body(reconcile)["existing"][0]["read_only"] is True


async def test_the_hourly_cap_holds(engine: Engine, llm: ScriptedLLMServer, project: str) -> None:
    rule = await seeded(engine, project)
    grades = ["grade 3", "grade 4", "grade 5"]
    for grade in grades:
        await recall(engine, project)
        llm.script("extract", extract_as(f"Use {grade} for muddy midtones."))
        llm.script("reconsolidate", verdict(rule, "contradict", f"use {grade}", f"Use {grade}."))
        llm.script(
            "transform_with_context", {"existing": [], "new": [{"index": 0, "action": "delete"}]}
        )
        last = await turn(engine, project, f"No, use {grade}.")

    assert len(llm.calls_for("reconsolidate")) == 2  # max_per_hour: 2; the third never asked
    assert last.reconsolidation is not None
    [decision] = last.reconsolidation
    assert decision.decision == "skipped" and decision.applied is False
    assert decision.reason == "cap: 2 reconsolidations per memory per hour"
    assert await content_of(engine, project, rule) == "Use grade 4."
    history = await engine.memory_history(project, "darkroom", "printer-1", rule)
    assert [v.content for v in history] == [GRADE_2, "Use grade 3."]


@pytest.mark.parametrize(
    "who",
    [
        {"user_id": "printer-2"},  # another user at the same bench
        {"properties": {"bench_id": "darkroom-enlarger-bench-7"}},  # the same user elsewhere
    ],
)
async def test_a_correction_from_another_scope_never_touches_it(
    engine: Engine, llm: ScriptedLLMServer, project: str, who: dict[str, Any]
) -> None:
    rule = await seeded(engine, project)
    await recall(engine, project, group="darkroom", user_id="printer-1")  # no bench filter
    llm.script("extract", extract_as(EXTRACTED))
    llm.script("reconsolidate", verdict(rule, "contradict", CORRECTION_QUOTE, GRADE_4))
    llm.script("transform_with_context", {"existing": [], "new": []})
    # It names the rule as recalled and sends the correction: neither may reach the rule.
    run = await turn(engine, project, CORRECTION, recalled=[rule], **who)

    assert llm.calls_for("reconsolidate") == []
    assert run.reconsolidation is None
    assert await content_of(engine, project, rule) == GRADE_2
    assert await engine.memory_history(project, "darkroom", "printer-1", rule) == []


async def test_the_recall_log_never_crosses_scopes(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    rule = await seeded(engine, project)
    assert await recall(engine, project) == [rule]
    await engine.dynamics.recalls.flush()
    llm.script("extract", extract_as(EXTRACTED))
    llm.script("reconsolidate", verdict(rule, "contradict", CORRECTION_QUOTE, GRADE_4))
    llm.script("transform_with_context", {"existing": [], "new": []})
    # printer-2 adds right after printer-1's search, without naming anything as recalled.
    await turn(engine, project, CORRECTION, user_id="printer-2")
    assert llm.calls_for("reconsolidate") == []
    assert await content_of(engine, project, rule) == GRADE_2

    now = engine.deps.clock.now()
    async with engine.db.connect() as conn:
        mine = await recalls.in_window(
            conn, project, "darkroom", "printer-1", now.replace(year=2000), now
        )
        theirs = await recalls.in_window(
            conn, project, "darkroom", "printer-2", now.replace(year=2000), now
        )
        other_group = await recalls.in_window(
            conn, project, "default", "printer-1", now.replace(year=2000), now
        )
    assert [memory_id for memory_id, _ in mine] == [rule]
    assert [props for _, props in mine] == [{"bench_id": BENCH}]
    assert theirs == [] and other_group == []


async def test_a_recall_outside_the_window_does_not_count(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    rule = await seeded(engine, project)
    await engine.put_group(
        project, "darkroom",
        {**DARKROOM_GROUP, "reconsolidation": {**DARKROOM_GROUP["reconsolidation"], "labile_window": 1}},
    )  # fmt: skip
    await recall(engine, project)
    await engine.dynamics.recalls.flush()
    await asyncio.sleep(1.5)
    llm.script("extract", extract_as(EXTRACTED))
    llm.script("transform_with_context", {"existing": [], "new": []})
    await turn(engine, project, CORRECTION)
    assert llm.calls_for("reconsolidate") == []
    assert await content_of(engine, project, rule) == GRADE_2


async def test_erasing_the_user_erases_their_recalls_and_decisions(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    rule = await seeded(engine, project)
    await recall(engine, project)
    llm.script("extract", extract_as(EXTRACTED))
    llm.script("reconsolidate", verdict(rule, "contradict", CORRECTION_QUOTE, GRADE_4))
    run = await turn(engine, project, CORRECTION)
    assert run.reconsolidation
    assert (await engine.erase_user(project, "printer-1")).erased == 1
    now = engine.deps.clock.now()
    async with engine.db.connect() as conn:
        left = await recalls.in_window(
            conn, project, "darkroom", "printer-1", now.replace(year=2000), now
        )
    assert left == []
    assert (await engine.get_run(project, run.run_id)).reconsolidation is None
