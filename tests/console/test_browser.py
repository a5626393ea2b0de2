"""The console in a real headless Chromium: log in, browse, search, a memory's history,
retry a failed run, an invalid group config shown inline. Screenshots: build/screenshots/."""

from __future__ import annotations

import pytest

from tests.api.fixtures import Tenant
from tests.console.browser import Browser
from tests.console.helpers import add, api
from tests.console.scenarios import rewritten_memory
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def log_in(browser: Browser, tenant: Tenant, start: str = "/console/memories") -> None:
    browser.clear_cookies()
    browser.open(tenant.url + start)
    browser.wait_until(lambda: "/console/login" in browser.url, "the login page")
    browser.fill("#key", tenant.key)
    browser.click("form button[type=submit]")
    browser.wait_until(lambda: browser.url.startswith(tenant.url + start), f"arrival at {start}")
    assert tenant.project in browser.text("header")


def test_log_in(browser: Browser, tenant: Tenant) -> None:
    browser.clear_cookies()
    browser.open(tenant.url + "/console/runs")
    browser.wait_for_text("Sign in")
    browser.screenshot("login")
    browser.fill("#key", "mnemo_not-a-real-key")
    browser.click("form button[type=submit]")
    browser.wait_for_text("invalid or revoked API key")
    assert browser.find("#key").get_attribute("aria-invalid") == "true"

    browser.fill("#key", tenant.key)
    browser.click("form button[type=submit]")
    browser.wait_until(lambda: browser.url == tenant.url + "/console/runs", "the runs page")
    assert tenant.project in browser.text("header")
    cookies = {c["name"]: c for c in browser.driver.get_cookies()}
    key_cookie = cookies["mnemo_console_key"]
    assert key_cookie["httpOnly"] and key_cookie["sameSite"] == "Strict"
    assert key_cookie["path"] == "/console"
    # JavaScript cannot read the key.
    assert "mnemo_console_key" not in browser.driver.execute_script("return document.cookie")

    browser.click("header form button")  # log out
    browser.wait_until(lambda: "/console/login" in browser.url, "the login page after logout")
    browser.open(tenant.url + "/console/runs")
    browser.wait_until(lambda: "/console/login" in browser.url, "login required again")


def test_browse(browser: Browser, tenant: Tenant) -> None:
    add(tenant, "I play the cello on Sundays", properties={"team": "strings"})
    add(tenant, "I am learning Portuguese for a move to Porto")
    add(tenant, "I prefer green tea to coffee")
    log_in(browser, tenant)
    browser.fill("#f-user", tenant.user)
    browser.click(".filters button[type=submit]")
    browser.wait_for_text("Memories 1\N{EN DASH}3 of 3")
    rows = browser.find_all("table.memories tbody tr")
    assert len(rows) == 3
    # htmx pushes the filters into the address bar, so the view can be bookmarked.
    browser.wait_until(lambda: f"user={tenant.user}" in browser.url, "the pushed URL")
    browser.screenshot("memories")

    browser.choose("#f-topic", "UserProfile")
    browser.click(".filters button[type=submit]")
    browser.wait_for_text("No memories")

    # A property narrows the topics scoped by it, as in search and list.
    band = {
        "topics": [
            {"name": "Gear", "description": "Instruments a player owns.",
             "scoping": {"user_scoped": True, "scope_properties": ["team"]}},
        ],
        "pipeline": {"steps": [
            {"id": "pre", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
            {"id": "commit", "kind": "commit"},
        ]},
    }  # fmt: skip
    with api(tenant) as client:
        assert client.put("/v1/groups/band", json=band).status_code == 200
    for team, gear in (("strings", "a cello"), ("brass", "a trombone")):
        items = [{"topic": "Gear", "content": f"The user owns {gear}."}]
        add(tenant, "", group="band", properties={"team": team},
            input={"pre_extracted": {"items": items}})  # fmt: skip
    browser.open(f"{tenant.url}/console/memories?group=band&user={tenant.user}")
    browser.wait_for_text("Memories 1\N{EN DASH}2 of 2")
    browser.open(
        f"{tenant.url}/console/memories?group=band&user={tenant.user}&properties=team%3Dstrings"
    )
    browser.wait_for_text("Memories 1\N{EN DASH}1 of 1")
    assert "cello" in browser.text("table.memories")


def test_search(browser: Browser, tenant: Tenant) -> None:
    add(tenant, "I play the cello on Sundays")
    add(tenant, "I am learning Portuguese for a move to Porto")
    log_in(browser, tenant)
    browser.fill("#f-user", tenant.user)
    # htmx re-renders the form with the query field enabled.
    browser.replaced("#f-q", lambda: browser.choose("#f-mode", "bm25"))
    assert browser.find("#f-q").is_enabled()
    browser.fill("#f-q", "Portuguese")
    browser.click(".filters button[type=submit]")
    browser.wait_for_text("1 result")
    assert "Portuguese" in browser.text("table.memories")
    assert "cello" not in browser.text("table.memories")

    browser.replaced("#f-q", lambda: browser.choose("#f-mode", "hybrid"))
    browser.fill("#f-q", "which instrument does the user play")
    browser.click(".filters button[type=submit]")
    browser.wait_for_text("for “which instrument does the user play”, hybrid")
    scores = [float(td.text) for td in browser.find_all("table.memories td.num")]
    assert scores and scores == sorted(scores, reverse=True)
    browser.screenshot("search")


def test_open_a_memorys_history(browser: Browser, tenant: Tenant, llm: ScriptedLLMServer) -> None:
    memory_id, first, second = rewritten_memory(tenant, llm)

    log_in(browser, tenant)
    browser.fill("#f-user", tenant.user)
    browser.click(".filters button[type=submit]")
    # Wait for the filtered page (htmx pushes its URL) before clicking into it.
    browser.wait_until(lambda: f"user={tenant.user}" in browser.url, "the filtered page")
    browser.wait_for_text("Memories 1\N{EN DASH}1 of 1")
    browser.click("table.memories td.content a")
    browser.wait_for_text("Versions")
    assert f"/console/memories/{memory_id}" in browser.url
    current, previous = browser.find_all("table.versions tbody tr[data-version]")
    assert "User said: I switched from coffee to green tea" in current.text
    assert second["run_id"][:8] in current.text and "updated" in current.text
    # The old version names the run that wrote it, not the one that replaced it.
    assert "User said: I drink coffee every morning" in previous.text and "created" in previous.text
    assert first["run_id"][:8] in previous.text and second["run_id"][:8] not in previous.text
    browser.click("table.versions tr.detail summary")
    browser.wait_for_text("I drink coffee every morning")
    provenance = browser.text("section[aria-labelledby=provenance-heading]")
    assert first["run_id"][:8] in provenance and second["run_id"][:8] in provenance
    browser.screenshot("memory-history")

    browser.click(f"section[aria-labelledby=provenance-heading] a[href$='{first['run_id']}']")
    browser.wait_for_text("Operations")
    assert memory_id in browser.text("table.ops")


def test_retry_a_failed_run(browser: Browser, tenant: Tenant, llm: ScriptedLLMServer) -> None:
    llm.fail("extract", status=503, times=2)  # both attempts of the live server's client
    run = add(tenant, "I run marathons in the autumn")
    assert run["status"] == "failed"

    log_in(browser, tenant, "/console/runs")
    browser.replaced("#r-status", lambda: browser.choose("#r-status", "failed"))
    browser.wait_until(lambda: "status=failed" in browser.url, "the pushed URL")
    browser.wait_for_text(run["run_id"][:8])
    browser.click(f"a[href='/console/runs/{run['run_id']}']")
    browser.wait_for_text("Retry run")
    assert "503" in browser.text("#run-error")
    browser.screenshot("run-failed")

    browser.click("#retry")
    browser.wait_for_text("Retry submitted")
    # The status block polls (htmx) until the run is terminal.
    browser.wait_until(
        lambda: "completed" in browser.text("#run-summary dl"), "the retried run to complete", 30
    )
    assert browser.find_all("#run-error") == []
    assert "created" in browser.text("table.ops")
    browser.screenshot("run-retried")

    for text in ("I swim on Tuesdays", "My sister lives in Oslo", "I am allergic to nuts"):
        add(tenant, text)
    browser.open(tenant.url + "/console/runs")
    browser.wait_for_text("4 runs")
    rows = browser.find_all("table.runs tbody tr")
    assert run["run_id"][:8] in rows[-1].text  # newest first: the retried run is the oldest
    browser.screenshot("runs")


def test_invalid_group_config_shows_its_error_inline(browser: Browser, tenant: Tenant) -> None:
    log_in(browser, tenant, "/console/groups")
    browser.click("a[href='/console/groups/default']")
    browser.wait_for_text("Pipeline")
    assert browser.find_all("svg.pipeline g.node")
    browser.screenshot("group")

    editor = browser.find("#document")
    text = str(editor.get_attribute("value")).replace("next: commit", "next: nowhere", 1)
    browser.driver.execute_script("arguments[0].value = arguments[1]", editor, text)
    browser.click("#save-group")
    browser.wait_for_text("Not saved")
    errors = browser.text("#editor-errors")
    assert "names unknown next step 'nowhere'" in errors
    assert browser.find("#document").get_attribute("aria-invalid") == "true"
    assert "next: nowhere" in str(browser.find("#document").get_attribute("value"))
    browser.screenshot("group-invalid")

    browser.open(tenant.url + "/console/groups/default")
    assert "next: nowhere" not in str(browser.find("#document").get_attribute("value"))


def test_pipeline_health_refreshes(browser: Browser, tenant: Tenant) -> None:
    add(tenant, "I read before sleeping")
    log_in(browser, tenant, "/console/health")
    every_series = str(browser.find("details.all-series").get_attribute("textContent"))
    assert "mnemo_runs_total" in every_series and "mnemo_llm_calls_total" in every_series
    # htmx polls the panels; each sample turns counters into rates and extends the trends.
    for runs in (1, 3, 2):
        before = browser.find("#health-panels").get_attribute("innerHTML")
        for i in range(runs):
            add(tenant, f"I walk to work, day {i}")
        browser.wait_until(
            lambda before=before: (
                browser.find("#health-panels").get_attribute("innerHTML") != before
            ),
            "a refresh of the panels",
            20,
        )
    assert "…" not in browser.text(".trends")
    assert len(browser.find_all(".trends svg.spark polyline")) == 4
    browser.screenshot("health")
