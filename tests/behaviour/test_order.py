"""Per-scope order: with many scopes' adds interleaved, each scope commits in add order."""

from __future__ import annotations

from mnemo.domain.scope import bounded_memory_id
from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import add, completed, items

USERS, STEPS = 6, 4
STATES = {
    "topics": [{"name": "State", "description": "The user's current state.",
                "scoping": {"user_scoped": True}, "is_bounded": True}],
    "pipeline": {"steps": [
        {"id": "items", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip


async def test_each_scope_commits_in_add_order(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "s", STATES)
    run_ids = []
    for step in range(STEPS):  # round-robin: the scopes' adds interleave
        for u in range(USERS):
            run = await add(mode, project, "s", f"o{u}", items(("State", f"state {step}")))
            run_ids.append(run.run_id)
    await completed(mode, project, *run_ids)
    for u in range(USERS):
        memory_id = bounded_memory_id(project, "s", "State", {"user_id": f"o{u}"})
        current = await mode.engine.get_memory(project, "s", f"o{u}", memory_id)
        assert current.content == f"state {STEPS - 1}"
        history = await mode.engine.memory_history(project, "s", f"o{u}", memory_id)
        assert [v.content for v in sorted(history, key=lambda v: v.version)] == [
            f"state {i}" for i in range(STEPS - 1)
        ]
