"""HTTP add -> extractor -> buffer -> transformer -> committer -> search, on a real broker."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from mnemo.kafka.replayops import replay_group
from tests.kafka.conftest import GROUP, Cluster, service_logs
from tests.kafka.helpers import completed_row, memories, publish_raw, serving, wait_all

pytestmark = pytest.mark.kafka


@pytest.fixture
async def http(cluster: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        serving(cluster.settings, cluster.engine) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as client,
    ):
        yield client


async def test_http_add_flows_through_all_four_services(
    cluster: Cluster, http: httpx.AsyncClient
) -> None:
    await cluster.engine.put_group("default", "kt", GROUP)
    response = await http.post(
        "/v1/memories",
        json={
            "group": "kt",
            "user_id": "e2e-user",
            "input": {"string": {"content": ["I keep bees"]}},
        },
    )
    assert response.status_code == 200, response.text
    run_id = response.json()["run_id"]
    response = await http.get(f"/v1/runs/{run_id}", params={"wait": 60})
    run = response.json()
    assert run["status"] == "completed", (run, service_logs(cluster))
    assert len(run["committed_operations"]["created"]) == 1
    found = await http.post(
        "/v1/memories/search", json={"query": "bees", "group": "kt", "user_id": "e2e-user"}
    )
    assert [m["content"] for m in found.json()["memories"]] == ["User said: I keep bees"]


def run_seconds_sum(cluster: Cluster) -> float:
    text = cluster.services["committer"].metrics()
    return sum(
        s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == "mnemo_run_seconds_sum"
    )


async def test_outside_producer_event_is_tracked_as_a_run(cluster: Cluster, project: str) -> None:
    event = {
        "project": project,
        "group": "kt",
        "user_id": "outside",
        "input": {"string": {"content": ["I published straight to Kafka"]}},
        "created_at": "2026-01-01T00:00:00Z",  # event time, long ago: not the run's start
    }
    published, latency_before = datetime.now(UTC), run_seconds_sum(cluster)
    run_id = await publish_raw(cluster, event, b"outside")
    row = await completed_row(cluster.engine, run_id, 60, service_logs(cluster))
    assert [m.content for m in await memories(cluster.engine, project, "outside")] == [
        "User said: I published straight to Kafka"
    ]
    assert row["created_at"] >= published - timedelta(seconds=5)  # admitted, not event time
    # latency from admission, not from the event time eleven months back (~3e7 s); an hour
    # of slack, so a loaded machine cannot fail it
    assert run_seconds_sum(cluster) - latency_before < 3600


async def test_replay_reruns_a_group_into_a_fresh_group(cluster: Cluster, project: str) -> None:
    from tests.kafka.helpers import add

    run_ids = [
        (await add(cluster.engine, project, "rp", f"replayed fact {i}")).run_id for i in range(3)
    ]
    await wait_all(cluster.engine, project, run_ids, timeout=60)
    await cluster.engine.put_group(project, "kt2", GROUP)
    new_ids = (await replay_group(cluster.ks, cluster.engine.db, "kt", "kt2", project)).run_ids
    assert len(new_ids) == 3
    again = await replay_group(cluster.ks, cluster.engine.db, "kt", "kt2", project)
    assert again.run_ids == new_ids  # idempotent ids
    await wait_all(cluster.engine, project, new_ids, timeout=60)
    from mnemo.domain.requests import ListRequest

    found, _ = await cluster.engine.list_memories(
        project, ListRequest.model_validate({"group": "kt2", "user_id": "rp", "limit": 10})
    )
    assert sorted(m.content for m in found) == [f"User said: replayed fact {i}" for i in range(3)]
