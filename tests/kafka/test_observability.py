"""Observability in Kafka mode: one trace per run across the gateway and the stage services
(context in record headers, exported over OTLP to a receiver in this test), the backlog
family measured from the broker (it grows while a stage is down and drains to 0), and the
dashboard's PromQL checked against what the gateway and the services export."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mnemo.api.exposition import exposition
from mnemo.kafka.channels import channel_names
from mnemo.kafka.events.channels import ChannelKind
from mnemo.tracing import spans
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, wait_all
from tests.support.otlp import ReceivedSpan
from tests.support.promql import dashboard_rows, problems, scraped

pytestmark = pytest.mark.kafka
DASHBOARD_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def gateway_spans() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    spans.use(provider)
    yield memory
    spans.use(None)
    provider.shutdown()


async def until_spans(cluster: Cluster, trace_id: int, names: set[str]) -> list[ReceivedSpan]:
    deadline = time.monotonic() + 30
    while True:
        found = cluster.traces.spans(trace_id)
        if names <= {s.name for s in found}:
            return found
        assert time.monotonic() < deadline, (sorted({s.name for s in found}), names)
        await asyncio.sleep(0.2)


async def test_one_trace_per_run_across_the_stage_services(
    cluster: Cluster, project: str, gateway_spans: InMemorySpanExporter
) -> None:
    names = channel_names(cluster.ks)
    runs = [await add(cluster.engine, project, "tracy", f"trace fact {i}") for i in range(2)]
    await wait_all(cluster.engine, project, [r.run_id for r in runs], timeout=60)
    adds = {
        dict(s.attributes or {})["mnemo.run_id"]: s
        for s in gateway_spans.get_finished_spans()
        if s.name == "mnemo.add"
    }
    first, second = (adds[r.run_id].context.trace_id for r in runs)
    raw, extracted = names.raw, names.name(ChannelKind.extracted)
    drafts = names.name(ChannelKind.drafts)
    wanted = {
        f"mnemo.process {raw}",
        "mnemo.step extract",
        "chat gpt-4o-mini",  # the stages' model setting (the scripted server ignores it)
        f"mnemo.process {extracted}",
        "mnemo.flush",
        f"mnemo.process {drafts}",
        "mnemo.step commit",
    }
    found = await until_spans(cluster, first, wanted)
    by_name = {s.name: s for s in found}
    extractor = by_name[f"mnemo.process {raw}"]
    assert extractor.parent_id == adds[runs[0].run_id].context.span_id
    assert extractor.service.endswith("-extractor")
    assert extractor.attributes["messaging.destination.name"] == raw
    call = by_name["chat gpt-4o-mini"]
    assert call.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert call.attributes["gen_ai.prompt.name"] == "extract"
    assert call.attributes["gen_ai.usage.input_tokens"] > 0
    flush = by_name["mnemo.flush"]
    assert flush.service.endswith("-buffer") and flush.links == (second,)
    commit = by_name["mnemo.step commit"]
    assert commit.service.endswith("-committer")
    assert commit.attributes["mnemo.commit.outcome"] == "applied"
    assert set(commit.attributes["mnemo.run_ids"]) == {r.run_id for r in runs}
    # The second run's own trace reaches the buffer; its commit is the first one's.
    await until_spans(cluster, second, {f"mnemo.process {raw}", f"mnemo.process {extracted}"})
    assert not any(s.error for s in found)


async def backlog(cluster: Cluster) -> dict[str, tuple[int, float]]:
    return {b.kind: (b.records, b.oldest_seconds) for b in await cluster.engine.transport.backlog()}


async def test_backlog_grows_while_a_stage_is_down_and_drains(
    cluster: Cluster, project: str
) -> None:
    drafts = channel_names(cluster.ks).name(ChannelKind.drafts)
    committer = cluster.services["committer"]
    await asyncio.to_thread(committer.stop)
    try:
        run = await add(cluster.engine, project, "lagging", "waits for the committer")
        deadline = time.monotonic() + 30
        while (await backlog(cluster))[drafts][0] < 1:
            assert time.monotonic() < deadline, await backlog(cluster)
            await asyncio.sleep(0.3)
        await asyncio.sleep(1.0)
        records, oldest = (await backlog(cluster))[drafts]
        assert records >= 1 and oldest >= 1.0
    finally:
        committer.start()
        await asyncio.to_thread(committer.wait_ready)
    await wait_all(cluster.engine, project, [run.run_id], timeout=60)
    deadline = time.monotonic() + 30
    while any(records for records, _ in (await backlog(cluster)).values()):
        assert time.monotonic() < deadline, (await backlog(cluster), service_logs(cluster))
        await asyncio.sleep(0.3)
    assert all(oldest == 0 for _, oldest in (await backlog(cluster)).values())


async def test_every_dashboard_panel_has_its_series(cluster: Cluster, project: str) -> None:
    """Gateway plus stage services export every series the dashboard queries, once a run
    has completed and one has failed (its LLM call refused: an LLM error and a DLQ record)."""
    cluster.llm.fail("extract", status=400, times=1)
    failed = await add(cluster.engine, project, "dash-fail", "refused")
    await wait_all(cluster.engine, project, [failed.run_id], timeout=60, status="failed")
    done = await add(cluster.engine, project, "dash-ok", "a fact for the dashboard")
    await wait_all(cluster.engine, project, [done.run_id], timeout=60)
    await asyncio.sleep(2.5)  # a lag measurement and a buffer tick later
    texts = [(await exposition(cluster.engine)).decode()]
    texts += [await asyncio.to_thread(s.metrics) for s in cluster.services.values()]
    samples = [s for text in texts for s in scraped(text)]
    dashboard = DASHBOARD_ROOT / "deploy" / "grafana" / "dashboards" / "mnemo-pipeline.json"
    panels = [p for row in dashboard_rows(dashboard).values() for p in row]
    assert len(panels) >= 15
    assert problems(panels, samples) == []
