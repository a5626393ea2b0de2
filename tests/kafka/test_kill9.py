"""kill -9 each stage service mid-stream, restart it: every acknowledged run completes once."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from mnemo.domain.memory import RunState
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, memories, statuses, wait_all
from tests.kafka.services import STAGES

pytestmark = pytest.mark.kafka
USERS, PER_ROUND = 5, 10


async def stuck_runs(cluster: Cluster, project: str, run_ids: list[str]) -> str:
    """What a failure needs to be understood: each unfinished run, and every warning or
    error any start of any stage logged (a tail shows only the last start's)."""
    lines = []
    for run_id in run_ids:
        run = await cluster.engine.get_run(project, run_id)
        if run.status != RunState.completed:
            lines.append(f"stuck: {run.model_dump_json()[:600]}")
    for log in sorted(next(iter(cluster.services.values())).log_dir.glob("*.log")):
        text = log.read_text(errors="replace")
        noted = [
            line for line in text.splitlines()
            if "WARNING" in line or "ERROR" in line or any(r in line for r in run_ids)
        ]  # fmt: skip
        lines += [f"{log.name}: {line}" for line in noted[-30:]]
    return "\n".join(lines)


async def test_kill_9_of_each_stage_loses_nothing_and_commits_nothing_twice(
    cluster: Cluster, project: str
) -> None:
    engine, llm = cluster.engine, cluster.llm
    llm.delay_seconds = 0.05  # keep records in flight when the kill lands
    run_ids: list[str] = []
    try:
        for round_, name in enumerate(STAGES):
            batch = []
            for i in range(PER_ROUND):
                n = round_ * PER_ROUND + i
                batch.append((await add(engine, project, f"k{n % USERS}", f"fact {n}")).run_id)
            run_ids += batch
            await asyncio.sleep(0.3)
            service = cluster.services[name]
            service.kill9()
            counts = await statuses(engine, project, run_ids)
            assert counts["completed"] < len(run_ids), f"{name} was killed after the stream ended"
            service.start()
        await wait_all(engine, project, run_ids, timeout=150)
    except AssertionError as exc:
        stuck = await stuck_runs(cluster, project, run_ids)
        raise AssertionError(f"{exc}\n{stuck}\n{service_logs(cluster)}") from exc
    finally:
        llm.delay_seconds = 0.0
    created: Counter[str] = Counter()
    for run_id in run_ids:
        run = await engine.get_run(project, run_id)
        assert run.status == RunState.completed
        assert run.committed_operations is not None
        assert len(run.committed_operations.created) == 1, run
        created[run.committed_operations.created[0].memory_id] += 1
    assert set(created.values()) == {1}
    contents: Counter[str] = Counter()
    for u in range(USERS):
        contents.update(m.content for m in await memories(engine, project, f"k{u}"))
    assert contents == Counter(f"User said: fact {n}" for n in range(len(run_ids)))
