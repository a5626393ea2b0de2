"""Scrape the services' real /metrics endpoints before and after runs: the series move."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from mnemo.domain.requests import AddRequest
from tests.kafka.conftest import GROUP, Cluster
from tests.kafka.helpers import add, wait_all
from tests.kafka.services import STAGES

# The shared group plus a transform step, so the transformer has work too.
TRANSFORM_GROUP = {**GROUP, "pipeline": {"steps": [
    {"id": "extract_string", "kind": "extract", "input_type": "string", "next": "polish"},
    {"id": "polish", "kind": "transform", "instructions": "Keep every fact.", "next": "commit"},
    {"id": "commit", "kind": "commit"},
]}}  # fmt: skip

pytestmark = pytest.mark.kafka


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def total(values: dict, name: str, **labels: str) -> float:  # type: ignore[type-arg]
    return sum(
        v for (n, ls), v in values.items()
        if n == name and all((k, val) in ls for k, val in labels.items())
    )  # fmt: skip


async def scrape(cluster: Cluster) -> dict[str, dict]:  # type: ignore[type-arg]
    return {n: samples(await asyncio.to_thread(s.metrics)) for n, s in cluster.services.items()}


async def test_metrics_endpoints_move_after_runs(cluster: Cluster, project: str) -> None:
    await cluster.engine.put_group(project, "kt-transform", TRANSFORM_GROUP)
    before = await scrape(cluster)
    run_ids = [
        (await add(cluster.engine, project, f"m{i}", f"metric fact {i}")).run_id for i in range(3)
    ]
    transformed = AddRequest.model_validate(
        {"group": "kt-transform", "user_id": "m9", "input": {"string": {"content": ["a fact"]}}}
    )
    run_ids.append((await cluster.engine.add(project, transformed)).run_id)
    await wait_all(cluster.engine, project, run_ids, timeout=60)
    await asyncio.sleep(2.5)  # one lag measurement and one buffer tick later
    after = await scrape(cluster)

    def moved(process: str, name: str, **labels: str) -> bool:
        return total(after[process], name, **labels) > total(before[process], name, **labels)

    for service in ("extractor", "transformer", "committer"):
        assert moved(service, "mnemo_records_in_total", service=service), service
    # Ticks are not records: the buffer counts exactly the 3 batches it held.
    records_in = "mnemo_records_in_total"
    assert total(after["buffer"], records_in) - total(before["buffer"], records_in) == 3
    # Lag comes from the gateway alone (every group); stages export none.
    assert all(k[0] != "mnemo_kafka_consumer_lag" for s in after.values() for k in s)
    gateway = samples(generate_latest().decode())
    groups = {dict(ls)["group"] for n, ls in gateway if n == "mnemo_kafka_consumer_lag"}
    assert {cluster.ks.group_id(s) for s in STAGES} <= groups
    assert moved("extractor", "mnemo_llm_calls_total", prompt="extract")
    assert moved("extractor", "mnemo_step_seconds_count", step="extract")
    assert moved("extractor", "mnemo_records_out_total", channel="extracted")
    assert moved("buffer", "mnemo_runs_total", status="in_buffer")
    # reconcile runs in the committer, so the buffer hands its batches to the drafts topic
    assert moved("buffer", "mnemo_records_out_total", channel="drafts")
    assert moved("transformer", "mnemo_records_out_total", channel="drafts")
    assert moved("committer", "mnemo_runs_total", status="completed")
    assert moved("committer", "mnemo_run_seconds_count")
    assert moved("committer", "mnemo_step_seconds_count", step="commit")
