"""Embedded `/metrics` shows every process's series: with one worker process (which runs the
whole pipeline), N completed runs read N on the gateway, the backlog family rises while runs
wait and is back to 0 once they are done, and every series the Grafana dashboard's
both-modes panels query is in the scrape."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.observability.served import ROOT, Served, mnemo_serve
from tests.support.otlp import OtlpReceiver
from tests.support.postgres import EmbeddedPostgres
from tests.support.promql import Sample, dashboard_rows, problems
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "mnemo-pipeline.json"
KAFKA_ROW = "Distributed mode (Kafka)"
N = 6


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True) as server:
        yield server


@pytest.fixture(scope="module")
def otlp() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def served(
    postgres: EmbeddedPostgres,
    llm: ScriptedLLMServer,
    otlp: OtlpReceiver,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    data_dir = Path(tmp_path_factory.mktemp("serve-metrics"))
    tracing = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    database = postgres.new_database("metrics")
    with mnemo_serve(database, data_dir, llm.base_url, tracing) as served:
        yield served


def value(samples: list[Sample], name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels`."""
    return sum(
        v
        for (n, ls), v in samples
        if n == name and all(ls.get(k) == want for k, want in labels.items())
    )


def scrape(http: httpx.Client) -> list[tuple[Sample, float]]:
    from prometheus_client.parser import text_string_to_metric_families

    response = http.get("/metrics")
    assert response.status_code == 200, response.text
    return [
        ((s.name, dict(s.labels)), s.value)
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    ]


def add(http: httpx.Client, user: str, text: str) -> str:
    body = {"user_id": user, "input": {"string": {"content": [text]}}}
    response = http.post("/v1/memories", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["run_id"])


def wait(http: httpx.Client, run_id: str) -> dict[str, object]:
    run: dict[str, object] = http.get(f"/v1/runs/{run_id}", params={"wait": 60}).json()
    assert run["status"] in ("completed", "failed"), run
    return run


def test_gateway_metrics_count_the_worker_processes_runs(
    served: Served, llm: ScriptedLLMServer
) -> None:
    with served.http() as http:
        before = scrape(http)
        assert value(before, "mnemo_runs_total", status="completed") == 0

        # One run the LLM refuses (HTTP 400: not retried), so failures count too.
        llm.fail("extract", status=400, times=1)
        refused = wait(http, add(http, f"u-{uuid.uuid4().hex[:6]}", "this one fails"))
        assert refused["status"] == "failed"

        # Runs of one scope go one at a time: while the slow LLM holds the first, the rest
        # wait on the bus, and the backlog shows them.
        llm.delay_seconds = 0.5
        user = f"u-{uuid.uuid4().hex[:6]}"
        ids = [add(http, user, f"fact number {i}") for i in range(N)]
        waiting = scrape(http)
        assert value(waiting, "mnemo_backlog_records", kind="run") >= 1
        assert value(waiting, "mnemo_backlog_oldest_seconds", kind="run") > 0
        runs = [wait(http, run_id) for run_id in ids]
        llm.delay_seconds = 0.0
        assert [r["status"] for r in runs] == ["completed"] * N

        after = scrape(http)
        samples = [s for s, _ in after]
        assert value(after, "mnemo_runs_total", status="completed") == N
        assert value(after, "mnemo_runs_total", status="failed") == 1
        assert value(after, "mnemo_runs_total", status="running") == N + 1  # the gateway's
        assert value(after, "mnemo_run_seconds_count") == N
        assert value(after, "mnemo_step_seconds_count", step="extract") == N
        assert value(after, "mnemo_step_seconds_count", step="commit") == N
        assert value(after, "mnemo_llm_calls_total", prompt="extract") == N + 1
        assert value(after, "mnemo_llm_errors_total", prompt="extract", kind="client") == 1
        assert value(after, "mnemo_llm_tokens_total", direction="prompt") > 0
        assert value(after, "mnemo_records_in_total", service="worker", channel="run") == N + 1
        assert ("mnemo_buffer_items", {}) in samples
        for kind in ("run", "flush"):
            assert value(after, "mnemo_backlog_records", kind=kind) == 0
            assert value(after, "mnemo_backlog_oldest_seconds", kind=kind) == 0

        rows = dashboard_rows(DASHBOARD)
        both = [p for title, panels in rows.items() if title != KAFKA_ROW for p in panels]
        assert len(both) >= 10 and KAFKA_ROW in rows
        assert problems(both, samples) == []


def test_mnemo_status_shows_one_screen(served: Served, llm: ScriptedLLMServer) -> None:
    import json
    import os
    import subprocess
    import sys

    with served.http() as http:
        llm.fail("extract", status=400, times=1)
        failed = add(http, f"u-{uuid.uuid4().hex[:6]}", "refused for status")
        assert wait(http, failed)["status"] == "failed"
    command = [sys.executable, "-m", "mnemo.cli.main", "status", "--url", served.url]
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}"}

    def status(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *extra], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    screen = status("--api-key", served.key)
    assert screen.returncode == 0, screen.stdout + screen.stderr
    lines = screen.stdout.splitlines()
    assert lines[0] == f"mnemo at {served.url}: ready"
    text = screen.stdout
    assert "  api key     accepted" in text
    assert "  postgres    ok: reachable" in text
    assert "  broker      none: the queue is the embedded bus in Postgres" in text
    assert "  workers     1 live: embedded@" in text and "1 of 1 running" in text
    assert "  backlog     run 0, flush 0" in text
    assert " failed" in text and " completed" in text
    assert "  last errors (project default):" in text
    (error,) = [line for line in lines if f"run {failed}" in line]
    assert "400" in error and "extract" in error

    report = json.loads(status("--api-key", served.key, "--json").stdout)
    assert report["ready"] is True and report["recent_failures"][0]["run_id"] == failed
    refused = status("--api-key", "mnemo_wrong")
    assert refused.returncode == 1 and "  api key     refused" in refused.stdout


def test_a_runs_trace_spans_the_gateway_and_the_worker_process(
    served: Served, otlp: OtlpReceiver
) -> None:
    """`mnemo serve` and its worker process both trace (OTEL_* reaches the children), and
    the run's context crosses the bus: one trace, two services."""
    with served.http() as http:
        run_id = add(http, f"u-{uuid.uuid4().hex[:6]}", "traced across processes")
        assert wait(http, run_id)["status"] == "completed"
    deadline = time.monotonic() + 30
    wanted = {"mnemo.add", "mnemo.process run", "mnemo.step extract", "mnemo.step commit"}
    while True:
        adds = [s for s in otlp.spans() if s.attributes.get("mnemo.run_id") == run_id]
        found = otlp.spans(adds[0].trace_id) if adds else []
        if wanted <= {s.name for s in found} and any(s.name.startswith("chat ") for s in found):
            break
        assert time.monotonic() < deadline, sorted({s.name for s in found})
        time.sleep(0.2)
    services = {s.name: s.service for s in found}
    assert services["mnemo.add"] == "mnemo-gateway"
    assert services["mnemo.process run"] == services["mnemo.step commit"] == "mnemo-worker"
    (consumed,) = [s for s in found if s.name == "mnemo.process run"]
    assert consumed.parent_id == adds[0].span_id


def test_a_worker_restart_keeps_the_totals(served: Served, llm: ScriptedLLMServer) -> None:
    """Counters of a worker process that died stay in the sums (they never go back)."""
    import psutil

    with served.http() as http:
        completed = value(scrape(http), "mnemo_runs_total", status="completed")
        (worker,) = psutil.Process(served.process.pid).children()
        worker.kill()
        worker.wait(10)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if http.get("/readyz").status_code == 200:
                break
            time.sleep(0.2)
        run = wait(http, add(http, f"u-{uuid.uuid4().hex[:6]}", "after the restart"))
        assert run["status"] == "completed"
        assert value(scrape(http), "mnemo_runs_total", status="completed") == completed + 1
