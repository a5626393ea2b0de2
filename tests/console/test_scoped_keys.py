"""The console signed in with a scoped key (issue 40), in a real headless Chromium: a key
bound to one user shows only that user's memories and runs and no project-wide page; a
read-only key shows no write controls, and its forms are refused when posted anyway."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer
from tests.console.browser import Browser
from tests.console.helpers import add, csrf_of, logged_in, memory_id_of
from tests.console.test_browser import log_in

pytestmark = pytest.mark.integration


def test_a_user_bound_key_sees_only_its_user(
    browser: Browser, tenant: Tenant, live_server: LiveServer
) -> None:
    ana, bob = replace(tenant, user="ana"), replace(tenant, user="bob")
    ana_run, bob_run = add(ana, "Ana keeps bees"), add(bob, "Bob restores clocks")
    bound = replace(tenant, key=live_server.create_key(tenant.project, user_id="ana"))
    log_in(browser, bound)
    assert "user ana" in browser.text("header")
    nav = browser.text("header nav")
    assert "Pipeline health" not in nav and "Memories" in nav

    browser.open(f"{tenant.url}/console/memories?group=default")
    browser.wait_for_text("bees")
    assert "clocks" not in browser.text()
    browser.screenshot("scoped-user-memories")
    browser.open(f"{tenant.url}/console/memories?group=default&user=bob")
    browser.wait_for_text("bound to another user_id")
    assert "clocks" not in browser.text()

    browser.open(f"{tenant.url}/console/runs")
    browser.wait_for_text(ana_run["run_id"][:8])
    assert bob_run["run_id"][:8] not in browser.text()
    browser.open(f"{tenant.url}/console/runs/{bob_run['run_id']}")
    browser.wait_for_text("Not found")
    browser.open(f"{tenant.url}/console/memories/{memory_id_of(bob_run)}?group=default")
    browser.wait_for_text("Not found")
    browser.open(f"{tenant.url}/console/health")
    browser.wait_for_text("bound to one user_id")


def test_a_read_only_key_shows_and_does_no_writes(
    browser: Browser, tenant: Tenant, live_server: LiveServer
) -> None:
    reader = replace(tenant, key=live_server.create_key(tenant.project, writable=False))
    log_in(browser, reader, "/console/groups")
    assert "read-only" in browser.text("header")
    assert not browser.find_all("#new-group")
    browser.open(f"{tenant.url}/console/groups/default")
    browser.wait_until(lambda: bool(browser.find_all("#read-only-group")), "the read-only note")
    assert not browser.find_all("form.editor")
    # Posting the forms anyway (as a page of this console could) is refused, nothing changes.
    with logged_in(reader) as client:
        token = csrf_of(client, "/console/groups")
        made = client.post("/console/groups", data={"csrf_token": token, "name": "sneaky"})
        assert made.status_code == 403 and "read-only" in made.text
    with logged_in(tenant) as client:
        assert client.get("/console/groups/sneaky").status_code == 404
