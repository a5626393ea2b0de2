"""Consolidation (episodes become a rule reachable through its sources) and
reconsolidation (a recalled rule is corrected, with history), on both transports."""

from __future__ import annotations

from typing import Any

from mnemo.domain.memory import MemoryStatus, Run
from mnemo.domain.requests import AddRequest, SearchRequest
from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import completed, listing, until
from tests.support.dynamics import (
    BENCH,
    CORRECTION,
    CORRECTION_QUOTE,
    DARKROOM_GROUP,
    DESK,
    EPISODES,
    EXTRACTED,
    GRADE_2,
    GRADE_4,
    LUTHIER_GROUP,
    QUESTION,
    RESTATEMENT,
    RULE,
    consolidate_answer,
    conversation,
    extract_as,
    facts,
    verdict,
)

AT_DESK = {"group": "luthier", "user_id": "luthier-1", "properties": {"desk_id": DESK}}
PRINTER = {"group": "darkroom", "user_id": "printer-1", "properties": {"bench_id": BENCH}}


async def run_done(mode: Mode, project: str, body: dict[str, Any]) -> Run:
    run = await mode.engine.add(project, AddRequest.model_validate(body))
    [done] = await completed(mode, project, run.run_id)
    return done


async def searched(mode: Mode, project: str, query: str, **body: Any) -> list[Any]:
    return await mode.engine.search(project, SearchRequest.model_validate({"query": query, **body}))


async def test_episodes_become_a_rule(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "luthier", LUTHIER_GROUP)
    mode.llm.script("consolidate", consolidate_answer)
    ids = []
    for text in EPISODES:
        run = await run_done(mode, project, {**AT_DESK, "input": facts("Episodes", text)})
        assert run.committed_operations is not None
        ids.append(run.committed_operations.created[0].memory_id)
    where = {"properties": {"desk_id": DESK}}
    [rule] = await until(
        lambda: listing(mode, project, "luthier", "luthier-1", topics=["Rules"], **where),
        bool, mode, "a rule",
    )  # fmt: skip
    assert rule.content == RULE
    assert len(mode.llm.calls_for("consolidate")) == 1
    assert [m.id for m in await listing(mode, project, "luthier", "luthier-1", **where)] == [
        rule.id
    ]
    sources = await mode.engine.memory_sources(project, "luthier", "luthier-1", rule.id)
    assert [m.id for m in sources] == ids
    assert {m.status for m in sources} == {MemoryStatus.consolidated}
    assert (await searched(mode, project, QUESTION, **AT_DESK))[0].id == rule.id


async def test_a_recalled_rule_is_corrected_with_history(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "darkroom", DARKROOM_GROUP)
    seeded = await run_done(mode, project, {**PRINTER, "input": facts("Rules", GRADE_2)})
    assert seeded.committed_operations is not None
    rule = seeded.committed_operations.created[0].memory_id
    recalled = await searched(mode, project, "muddy midtones", **PRINTER)
    assert [m.id for m in recalled] == [rule]
    mode.llm.script("extract", extract_as(EXTRACTED))
    mode.llm.script("reconsolidate", verdict(rule, "contradict", CORRECTION_QUOTE, GRADE_4))
    body = {**PRINTER, "input": conversation(("assistant", GRADE_2), ("user", CORRECTION))}
    corrected = await run_done(mode, project, body)
    assert corrected.committed_operations is not None
    assert [o.memory_id for o in corrected.committed_operations.updated] == [rule]
    assert corrected.reconsolidation and corrected.reconsolidation[0].applied is True
    history = await mode.engine.memory_history(project, "darkroom", "printer-1", rule)
    assert [v.content for v in history] == [GRADE_2]
    found = await searched(mode, project, "which grade?", **PRINTER)
    assert [m.content for m in found] == [GRADE_4]

    # A restatement writes nothing; another user's correction never reaches this rule.
    assert [m.id for m in await searched(mode, project, "muddy midtones", **PRINTER)] == [rule]
    mode.llm.script("extract", extract_as("Use grade 4 for muddy midtones as usual."))
    mode.llm.script("reconsolidate", verdict(rule, "match", RESTATEMENT))
    body = {**PRINTER, "input": conversation(("assistant", GRADE_4), ("user", RESTATEMENT))}
    restated = await run_done(mode, project, body)
    assert restated.committed_operations is not None
    assert restated.committed_operations.updated == restated.committed_operations.created == []
    assert restated.reconsolidation and restated.reconsolidation[0].decision == "match"
    gate_calls = len(mode.llm.calls_for("reconsolidate"))
    mode.llm.script("transform_with_context", {"existing": [], "new": []})
    other = {**PRINTER, "user_id": "printer-2", "recalled": [rule],
             "input": conversation(("assistant", GRADE_2), ("user", CORRECTION))}  # fmt: skip
    await run_done(mode, project, other)
    assert len(mode.llm.calls_for("reconsolidate")) == gate_calls
    memory = await mode.engine.get_memory(project, "darkroom", "printer-1", rule)
    assert memory.content == GRADE_4
    assert len(await mode.engine.memory_history(project, "darkroom", "printer-1", rule)) == 1
