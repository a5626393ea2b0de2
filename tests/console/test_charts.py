"""Pipeline-health charts and the memory timeline over HTTP, with real runs behind them."""

from __future__ import annotations

import html
import re
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.console.helpers import add, api
from tests.console.scenarios import consolidated_rule, rewritten_memory
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def _figure(page: str, title: str) -> str:
    found = re.search(
        rf'<figure class="chart-figure"><figcaption>{re.escape(title)}</figcaption>(.*?)</figure>',
        page,
        flags=re.S,
    )
    assert found, f"no chart {title!r}"
    return found.group(1)


def test_run_charts_draw_the_last_hour_at_once(tenant: Tenant, llm: ScriptedLLMServer) -> None:
    for text in ("I swim on Tuesdays", "My sister lives in Oslo"):
        add(tenant, text)
    llm.fail("extract", status=503, times=2)
    assert add(tenant, "I run marathons")["status"] == "failed"
    with api(tenant) as client:
        page = client.get("/console/health").text  # the first view: no sampling needed
    runs = _figure(page, "Runs per minute")
    assert 'class="line series-ok"' in runs or 'class="dot series-ok"' in runs
    assert 'class="line series-bad"' in runs or 'class="dot series-bad"' in runs
    assert "(none)" not in runs
    latency = _figure(page, "Add to commit (completed runs)")
    assert 'class="line series-0"' in latency and 'class="line series-1"' in latency
    # Another project's charts are its own: nothing of these runs.
    assert "Last hour" in page


def test_llm_and_backlog_charts_come_from_the_sampled_metrics(tenant: Tenant) -> None:
    add(tenant, "I read before sleeping")
    with api(tenant) as client:
        deadline = time.monotonic() + 60
        while True:  # the sampler (every 10 s) or a view records a second snapshot
            page = client.get("/console/health").text
            llm = _figure(page, "LLM calls and errors in the trailing minute")
            if 'class="line series-0"' in llm:
                break
            assert time.monotonic() < deadline, llm
            add(tenant, "I walk to work")
            time.sleep(1)
    backlog = _figure(page, "Backlog and Kafka lag per stage")
    assert "backlog_" in backlog and "<polyline" in backlog


def _dated_add(client: httpx.Client, tenant: Tenant, text: str, at: datetime) -> None:
    body = {
        "input": {"string": {"content": [text], "created_at": at.isoformat()}},
        "user_id": tenant.user,
    }
    run_id = client.post("/v1/memories", json=body).json()["run_id"]
    assert client.get(f"/v1/runs/{run_id}", params={"wait": 30}).json()["status"] == "completed"


def test_the_timeline_shows_versions_supersessions_and_consolidations(
    tenant: Tenant, llm: ScriptedLLMServer
) -> None:
    memory_id, _, _ = rewritten_memory(tenant, llm)
    rule_id, episode_ids = consolidated_rule(tenant, llm)
    with api(tenant) as client:
        page = client.get("/console/timeline", params={"user": tenant.user}).text
        luthier = client.get(
            "/console/timeline", params={"user": tenant.user, "group": "luthier"}
        ).text
        empty = client.get("/console/timeline").text
    svg = page.split('<svg class="timeline"', 1)[1].split("</svg>", 1)[0]
    lane = svg.split(f'data-memory="{memory_id}"', 1)[1].split("</g>", 1)[0]
    assert lane.count('class="version superseded"') == 1 and 'class="version current"' in lane
    assert 'class="supersession"' in lane
    assert "I drink coffee every morning" in html.unescape(lane)

    svg = luthier.split('<svg class="timeline"', 1)[1].split("</svg>", 1)[0]
    assert f'class="lane lane-rule" data-memory="{rule_id}"' in svg
    for episode in episode_ids:
        assert f'class="lane lane-consolidated" data-memory="{episode}"' in svg
    assert svg.count('class="consolidation-link"') == 3
    assert f"/console/memories/{rule_id}?group=luthier" in svg
    assert "Enter a user id" in empty


def test_the_timeline_places_versions_on_event_time(tenant: Tenant) -> None:
    now = datetime.now(UTC)
    with api(tenant) as client:
        _dated_add(client, tenant, "I started pottery classes", now - timedelta(days=30))
        _dated_add(client, tenant, "I adopted a cat named Miso", now - timedelta(days=2))
        page = client.get("/console/timeline", params={"user": tenant.user}).text
    svg = page.split('<svg class="timeline"', 1)[1].split("</svg>", 1)[0]
    xs = {}
    for text in ("pottery", "Miso"):
        lane = next(g for g in svg.split("<g ")[1:] if text in g)
        xs[text] = float(re.search(r'<circle cx="([\d.]+)"', lane).group(1))  # type: ignore[union-attr]
    assert xs["pottery"] < xs["Miso"]
    ticks = re.findall(r'class="tick"[^>]*>([^<]+)<', svg)
    assert f"{now - timedelta(days=30):%Y-%m}" in " ".join(ticks)  # a span of days: dates
