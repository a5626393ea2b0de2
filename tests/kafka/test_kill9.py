"""kill -9 each stage service mid-stream, restart it: every acknowledged run completes once."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime

import pytest

from mnemo.domain.memory import RunState
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, memories, statuses, wait_all
from tests.kafka.services import STAGES
from tests.kafka.trail import record_trail

pytestmark = pytest.mark.kafka
USERS, PER_ROUND = 5, 10


def spans_of(cluster: Cluster, run_id: str) -> list[str]:
    """Every span the stages exported that names the run: which stage took which record."""
    found = sorted(
        (s for s in cluster.traces.spans() if run_id in (s.attributes.get("mnemo.run_ids") or ())),
        key=lambda s: s.start_ns,
    )
    return [
        f"  span {datetime.fromtimestamp(s.start_ns / 1e9, UTC):%H:%M:%S.%f} {s.service} "
        f"{s.name} error={s.error} "
        + " ".join(f"{k}={v}" for k, v in s.attributes.items() if k != "mnemo.run_ids")
        for s in found
    ]


async def stuck_runs(cluster: Cluster, project: str, run_ids: list[str]) -> str:
    """What a failure needs to be understood: each unfinished run, and every warning or
    error any start of any stage logged (a tail shows only the last start's)."""
    lines = []
    unfinished = []
    for run_id in run_ids:
        run = await cluster.engine.get_run(project, run_id)
        if run.status != RunState.completed:
            unfinished.append(run_id)
            lines.append(f"stuck: {run.model_dump_json()[:600]}")
            lines += spans_of(cluster, run_id)
    if unfinished:
        lines += await record_trail(cluster.ks, unfinished)
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
    # Each LLM call takes 0.5 s, so the kill (0.3 s after a round's adds) lands while that
    # round's records are in flight, however fast the machine.
    llm.delay_seconds = 0.5
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
        llm.delay_seconds = 0.0  # a stage a failure left killed: the next test starts it
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
