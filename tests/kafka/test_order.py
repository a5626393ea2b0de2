"""Per-scope order with many scopes interleaved: every stage keeps each scope in add order."""

from __future__ import annotations

import pytest

from mnemo.domain.scope import bounded_memory_id
from tests.kafka.conftest import Cluster
from tests.kafka.helpers import add, add_state, memories, wait_all

pytestmark = pytest.mark.kafka
USERS, STEPS = 12, 6


async def test_each_scope_commits_in_add_order(cluster: Cluster, project: str) -> None:
    engine = cluster.engine
    run_ids = []
    for step in range(STEPS):  # round-robin: the scopes' adds interleave on every partition
        for u in range(USERS):
            run_ids.append((await add_state(engine, project, f"o{u}", f"state {step}")).run_id)
            run_ids.append((await add(engine, project, f"o{u}", f"fact {step}")).run_id)
    await wait_all(engine, project, run_ids, timeout=120)
    for u in range(USERS):
        user = f"o{u}"
        memory_id = bounded_memory_id(project, "kt", "State", {"user_id": user})
        current = await engine.get_memory(project, "kt", user, memory_id)
        assert current.content == f"state {STEPS - 1}"
        history = await engine.memory_history(project, "kt", user, memory_id)
        assert [v.content for v in sorted(history, key=lambda v: v.version)] == [
            f"state {i}" for i in range(STEPS - 1)
        ]
        facts = [m for m in await memories(engine, project, user) if m.topic == "Facts"]
        by_step = sorted(facts, key=lambda m: int(m.content.rsplit(" ", 1)[1]))
        assert [m.content for m in by_step] == [f"User said: fact {i}" for i in range(STEPS)]
        created = [m.created_at for m in by_step]
        assert created == sorted(created), f"{user}: facts committed out of add order"
