"""Event time and as-of through the Kafka services (gateway, extractor, buffer, committer)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mnemo.domain.requests import AddRequest
from mnemo.domain.scope import bounded_memory_id
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add_state, completed_row, memories, publish_raw, wait_all
from tests.support.snapshots import Snapshot, contents, snapshot

pytestmark = pytest.mark.kafka

STATES = ("User prefers dark mode.", "User prefers light mode.",
          "User prefers solarized mode.", "User prefers high contrast mode.")  # fmt: skip
QUERY = "which mode does the user prefer"


async def test_as_of_answers_each_instant_of_a_preference_history(
    cluster: Cluster, project: str
) -> None:
    engine, user = cluster.engine, "asof"
    instants: list[datetime] = []
    live: list[Snapshot] = []
    for state in STATES:
        run = await add_state(engine, project, user, state)
        await wait_all(engine, project, [run.run_id], timeout=60)
        instants.append(datetime.now(UTC))
        live.append(await snapshot(engine, project, QUERY, group="kt", user_id=user))
    for i, at in enumerate(instants):
        then = await snapshot(engine, project, QUERY, group="kt", user_id=user, as_of=at)
        assert then == live[i], f"as of instant {i}"
        assert contents(then, "fetch") == [STATES[i]]
        for mode in ("vector", "bm25", "hybrid", "list"):
            assert contents(then, mode) == [STATES[i]], (i, mode)
    memory_id = bounded_memory_id(project, "kt", "State", {"user_id": user})
    found = await engine.memory_provenance(project, "kt", user, memory_id)
    assert [v.operation for v in found.versions] == ["created"] + ["updated"] * 3
    assert all(v.run is not None and v.run.raw_input_state == "retained" for v in found.versions)


async def _add_said(cluster: Cluster, project: str, user: str, text: str, at: datetime) -> str:
    body = {
        "group": "kt",
        "user_id": user,
        "input": {"string": {"content": [text], "created_at": at.isoformat()}},
    }
    return (await cluster.engine.add(project, AddRequest.model_validate(body))).run_id


async def test_dated_adds_keep_their_event_time_and_batch_by_it(
    cluster: Cluster, project: str
) -> None:
    """Two adds of last year an hour apart, sent back to back: they carry their own event
    times to the committed memories, and the buffer (count 2, idle 0.4 s) batches them
    apart, as it would have when they happened, instead of together by count."""
    then = datetime(2025, 5, 4, 9, 0, tzinfo=UTC)
    user = "dated"
    run_ids = [
        await _add_said(cluster, project, user, "I repotted the fig", then),
        await _add_said(cluster, project, user, "I pruned the roses", then + timedelta(hours=1)),
    ]
    await wait_all(cluster.engine, project, run_ids, timeout=60)
    found = {m.content: m for m in await memories(cluster.engine, project, user)}
    fig, roses = found["User said: I repotted the fig"], found["User said: I pruned the roses"]
    assert fig.event_time == fig.event_time_end == then
    assert roses.event_time == then + timedelta(hours=1)
    assert fig.created_at > datetime(2026, 1, 1, tzinfo=UTC)  # system time
    # One flush commits in one transaction at one time: two commits mean two batches.
    assert fig.created_at != roses.created_at, service_logs(cluster)


async def test_an_outside_producers_created_at_dates_the_input_not_the_run(
    cluster: Cluster, project: str
) -> None:
    happened = datetime(2024, 12, 24, 18, 0, tzinfo=UTC)
    event = {
        "project": project,
        "group": "kt",
        "user_id": "outside-dated",
        "input": {"string": {"content": ["I baked stollen"]}},
        "created_at": happened.isoformat(),
    }
    run_id = await publish_raw(cluster, event, b"dated")
    row = await completed_row(cluster.engine, run_id, 60, service_logs(cluster))
    assert row["created_at"] > datetime(2026, 1, 1, tzinfo=UTC)  # admitted now
    assert row["raw_input"]["string"]["created_at"] == "2024-12-24T18:00:00Z"
    [memory] = await memories(cluster.engine, project, "outside-dated")
    assert memory.event_time == happened
