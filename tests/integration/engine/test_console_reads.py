"""The engine reads the operator console uses: recent runs, runs by id, a project-wide
browse across users, and a memory's runs. All of them stay inside the caller's project."""

from __future__ import annotations

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.memory import RunState
from mnemo.domain.requests import InvalidRequest, NotFound
from tests.integration.engine.helpers import add, add_and_wait, facts

pytestmark = pytest.mark.integration


async def test_recent_runs_page_newest_first_with_filters(engine: Engine, project: str) -> None:
    added = [
        await add(
            engine,
            project,
            {"user_id": f"u{i % 2}", "input": facts(("UserKnowledge", f"Fact {i}."))},
        )
        for i in range(5)
    ]
    for run in added:
        await engine.wait_run(project, run.run_id, 30)
    await add(
        engine, "elsewhere-" + project, {"user_id": "u0", "input": facts(("UserKnowledge", "X."))}
    )

    newest = [r.run_id for r in reversed(added)]
    assert [r.run_id for r in await engine.list_runs(project)] == newest
    first = await engine.list_runs(project, limit=2)
    second = await engine.list_runs(
        project, limit=2, before=(first[-1].created_at, first[-1].run_id)
    )
    rest = await engine.list_runs(project, before=(second[-1].created_at, second[-1].run_id))
    assert [r.run_id for r in first + second + rest] == newest
    assert [r.run_id for r in await engine.list_runs(project, user_id="U1")] == newest[1::2]
    assert await engine.list_runs(project, status=RunState.failed) == []
    assert len(await engine.list_runs(project, status=RunState.completed)) == 5


async def test_runs_by_id_and_their_input_stay_in_the_project(engine: Engine, project: str) -> None:
    mine = await add_and_wait(
        engine, project, {"user_id": "u", "input": facts(("UserKnowledge", "A."))}
    )
    theirs = await add_and_wait(
        engine, "other-" + project, {"user_id": "u", "input": facts(("UserKnowledge", "B."))}
    )
    found = await engine.get_runs(project, [mine.run_id, theirs.run_id, "missing"])
    assert [r.run_id for r in found] == [mine.run_id]
    submitted = await engine.run_input(project, mine.run_id)
    assert submitted.raw_input["pre_extracted"]["items"][0]["content"] == "A."
    assert submitted.starting_step_id == "pre_extracted"
    with pytest.raises(NotFound):
        await engine.run_input(project, theirs.run_id)


async def test_browse_sees_every_user_of_the_project_and_nothing_else(
    engine: Engine, project: str
) -> None:
    for user, text in (("ann", "Ann likes figs."), ("bo", "Bo likes plums."), ("bo", "Bo rows.")):
        await add_and_wait(
            engine,
            project,
            {"user_id": user, "input": facts(("UserKnowledge", text))},
        )
    await add_and_wait(
        engine, "other-" + project, {"user_id": "ann", "input": facts(("UserKnowledge", "Hidden."))}
    )
    page, total = await engine.browse_memories(project, "default", limit=2)
    assert total == 3 and [m.content for m in page] == ["Bo rows.", "Bo likes plums."]
    rest, _ = await engine.browse_memories(project, "default", limit=2, offset=2)
    assert [m.content for m in rest] == ["Ann likes figs."]
    bo, total = await engine.browse_memories(project, "default", user_id="BO")
    assert total == 2 and {m.user_id for m in bo} == {"bo"}
    assert (await engine.browse_memories(project, "default", topic="UserProfile"))[1] == 0
    with pytest.raises(InvalidRequest):
        await engine.browse_memories(project, "default", topic="Nope")
    with pytest.raises(InvalidRequest):
        await engine.browse_memories(project, "no-such-group")


async def test_a_memory_names_the_runs_that_wrote_it(engine: Engine, project: str) -> None:
    run = await add_and_wait(
        engine, project, {"user_id": "u", "input": facts(("UserKnowledge", "C."))}
    )
    memory_id = run.committed_operations.created[0].memory_id  # type: ignore[union-attr]
    assert await engine.memory_run_ids(project, "default", "u", memory_id) == [run.run_id]
    with pytest.raises(NotFound):
        await engine.memory_run_ids(project, "default", "someone-else", memory_id)
    with pytest.raises(NotFound):
        await engine.memory_run_ids("other-" + project, "default", "u", memory_id)
