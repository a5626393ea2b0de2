"""The console in headless Chromium for issue 35: the group editor's whole document and its
refusal of a stale save, a memory's truthful provenance, the pipeline-health charts and the
memory timeline. Their screenshots are the ones in docs/console.md
(scripts/console-screenshots.sh copies them there)."""

from __future__ import annotations

import os
import time

import pytest

from tests.api.fixtures import Tenant
from tests.console.browser import Browser
from tests.console.helpers import add, api
from tests.console.scenarios import WORKSHOP_STORY, workshop
from tests.console.test_browser import log_in
from tests.console.test_group_editor import FULL_DOCUMENT
from tests.support.dynamics import EPISODES, RULE
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def _set_editor(browser: Browser, text: str) -> None:
    editor = browser.find("#document")
    browser.driver.execute_script("arguments[0].value = arguments[1]", editor, text)


def test_group_editor_shows_every_section_and_refuses_a_stale_save(
    browser: Browser, tenant: Tenant
) -> None:
    with api(tenant) as client:
        client.put("/v1/groups/habits", json=FULL_DOCUMENT).raise_for_status()
    log_in(browser, tenant, "/console/groups/habits")
    text = str(browser.find("#document").get_attribute("value"))
    for section in ("retention:", "raw_input_days: 30", "consolidation:", "reconsolidation:"):
        assert section in text
    browser.click("#save-group")  # unchanged
    browser.wait_for_text("Saved.")
    with api(tenant) as client:
        assert client.get("/v1/groups/habits").json()["retention"]["raw_input_days"] == 30
        # Someone else saves meanwhile (through the API, as another operator would).
        changed = {**FULL_DOCUMENT, "retention": {"raw_input_days": 7}}
        client.put("/v1/groups/habits", json=changed).raise_for_status()
    _set_editor(browser, text.replace("max_per_hour: 2", "max_per_hour: 5"))
    browser.click("#save-group")
    browser.wait_for_text("Not saved")
    assert "someone saved this group after you opened it" in browser.text("#editor-errors")
    assert "max_per_hour: 5" in str(browser.find("#document").get_attribute("value"))
    browser.screenshot("group-conflict")
    with api(tenant) as client:
        stored = client.get("/v1/groups/habits").json()
    assert stored["retention"]["raw_input_days"] == 7
    assert stored["reconsolidation"]["max_per_hour"] == 2

    browser.click(".editor-actions a")  # Discard changes: the current configuration
    browser.wait_until(lambda: "/console/groups/habits" in browser.url, "the group page")
    text = str(browser.find("#document").get_attribute("value"))
    assert "raw_input_days: 7" in text
    _set_editor(browser, text.replace("max_per_hour: 2", "max_per_hour: 5"))
    browser.click("#save-group")
    browser.wait_for_text("Saved.")
    with api(tenant) as client:
        stored = client.get("/v1/groups/habits").json()
    assert stored["reconsolidation"]["max_per_hour"] == 5
    assert stored["retention"]["raw_input_days"] == 7


def test_memory_timeline_rule_provenance_and_health_charts(
    browser: Browser, tenant: Tenant, llm: ScriptedLLMServer
) -> None:
    rule_id = workshop(tenant, llm)
    log_in(browser, tenant, "/console/timeline")
    browser.fill("#t-user", tenant.user)
    browser.choose("#t-group", "workshop")
    browser.click(".filters button[type=submit]")
    browser.wait_until(lambda: browser.find_all("svg.timeline"), "the timeline")
    lanes = browser.find_all("svg.timeline g.lane")
    assert len(lanes) == len(WORKSHOP_STORY) - 2 + 1  # two rewrites; one rule
    assert len(browser.find_all("svg.timeline .supersession")) == 2
    assert len(browser.find_all("svg.timeline .consolidation-link")) == 3
    assert len(browser.find_all("svg.timeline g.lane-consolidated")) == 3
    browser.screenshot("timeline")

    browser.click(f"svg.timeline g[data-memory='{rule_id}'] a")
    browser.wait_for_text("Source episodes")
    assert RULE in browser.text("table.versions")
    sources = browser.text("table.versions .sources")
    for episode in EPISODES:
        assert episode in sources
    assert "consolidation of 3 episodes" in browser.text("table.versions td.writer")
    browser.screenshot("memory-rule")

    # A superseded preference: each version with the run that wrote it, its kept input.
    browser.open(tenant.url + f"/console/timeline?group=workshop&user={tenant.user}")
    browser.wait_until(lambda: browser.find_all("svg.timeline"), "the timeline again")
    varnish = next(
        g
        for g in browser.find_all("svg.timeline g.lane")
        if "spirit varnish" in str(g.get_attribute("innerHTML"))
    )
    varnish.find_element("css selector", "a").click()
    browser.wait_for_text("Versions")
    rows = browser.find_all("table.versions tbody tr[data-version]")
    assert len(rows) == 2 and "oil varnish" in rows[1].text and "spirit varnish" in rows[0].text
    assert rows[0].find_element("css selector", "td.writer").text.startswith("run ")
    browser.screenshot("memory-versions")

    llm.fail("extract", status=503, times=2)
    assert add(tenant, "I run marathons")["status"] == "failed"
    spread_runs(tenant, llm, float(os.environ.get(SPREAD_VARIABLE, "0")))
    browser.open(tenant.url + "/console/health")
    deadline = time.monotonic() + 60
    while not browser.find_all("figure.chart-figure polyline.series-0"):  # LLM calls sampled
        assert time.monotonic() < deadline, "no sampled LLM calls"
        time.sleep(2)
        browser.open(tenant.url + "/console/health")
    titles = [f.text.split("\n")[0] for f in browser.find_all("figure.chart-figure figcaption")]
    assert titles == [
        "Runs per minute",
        "Add to commit (completed runs)",
        "LLM calls and errors in the trailing minute",
        "Backlog and Kafka lag per stage",
    ]
    runs_chart = browser.find_all("figure.chart-figure")[0]
    assert runs_chart.find_elements("css selector", ".series-ok")
    assert runs_chart.find_elements("css selector", ".series-bad")
    browser.screenshot("health-charts")


SPREAD_VARIABLE = "MNEMO_SCREENSHOT_SPREAD_MINUTES"


def spread_runs(tenant: Tenant, llm: ScriptedLLMServer, minutes: float) -> None:
    """For the docs' screenshots (scripts/console-screenshots.sh sets MNEMO_SCREENSHOT_SPREAD_
    MINUTES): adds every 15 s for `minutes`, every fifth one failing, so the charts show
    more than one minute. 0 (the tests' default) adds nothing."""
    deadline = time.monotonic() + minutes * 60
    n = 0
    while time.monotonic() < deadline:
        n += 1
        if n % 5 == 0:
            llm.fail("extract", status=503, times=2)
        for i in range(1 + n % 3):
            add(tenant, f"I practised scales for {10 * n + i} minutes today", wait=False)
        time.sleep(15)


def test_login_page_says_which_key(browser: Browser, tenant: Tenant) -> None:
    browser.clear_cookies()
    browser.open(tenant.url + "/console/login")
    help_text = browser.text("#key-help")
    assert "make run" in help_text and "created a local API key: mnemo_" in help_text
    browser.screenshot("login-help")
