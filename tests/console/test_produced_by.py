"""Issue 32: every run says what produced it (the model's name, or `offline`): in
`GET /v1/runs/{id}` (an extension field), in provenance and as a console badge on runs and on
a memory's page. The live server here runs the scripted model "scripted"; the offline label
is tested on the engine (tests/integration/engine/test_supersession.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.console.helpers import add, memory_id_of

pytestmark = pytest.mark.integration
BADGE = (
    '<span class="badge badge-info producer" title="produced by the model scripted">scripted</span>'
)


def test_runs_memories_and_provenance_name_the_model(tenant: Tenant) -> None:
    run = add(tenant, "I keep three hens")
    assert run["produced_by"] == "scripted"
    memory_id = memory_id_of(run)
    headers = {"Authorization": f"Bearer {tenant.key}"}
    with httpx.Client(base_url=tenant.url, timeout=60, headers=headers) as client:
        assert BADGE in client.get("/console/runs").text
        assert BADGE in client.get(f"/console/runs/{run['run_id']}").text
        page = client.get(f"/console/memories/{memory_id}", params={"user": tenant.user})
        assert BADGE in page.text
        provenance = client.get(
            f"/v1/memories/{memory_id}/provenance", params={"user_id": tenant.user}
        )
        assert provenance.status_code == 200, provenance.text
        [version] = provenance.json()["versions"]
        assert version["run"]["produced_by"] == "scripted"


def test_an_expired_memory_is_marked_in_the_console(tenant: Tenant, live_server: Any) -> None:
    import psycopg

    group = {
        "topics": [{"name": "Trips", "description": "Trips.", "scoping": {"user_scoped": True},
                    "ttl_days": 30}],
        "pipeline": {"steps": [
            {"id": "p", "kind": "extract", "input_type": "pre_extracted", "next": "c"},
            {"id": "c", "kind": "commit"}]},
    }  # fmt: skip
    headers = {"Authorization": f"Bearer {tenant.key}"}
    with httpx.Client(base_url=tenant.url, timeout=60, headers=headers) as client:
        assert client.put("/v1/groups/trips", json=group).status_code == 200
        items = [{"topic": "Trips", "content": c} for c in ("User flew to Oslo.", "User sailed.")]
        added = client.post("/v1/memories", json={
            "input": {"pre_extracted": {"items": items}}, "user_id": tenant.user, "group": "trips"})  # fmt: skip
        run = client.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
        assert run["status"] == "completed", run
        url = live_server.settings.database_url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(
                "UPDATE memories SET updated_at = updated_at - interval '31 days' "
                "WHERE project = %s AND content = 'User flew to Oslo.'", (tenant.project,)
            )  # fmt: skip
        page = client.get("/console/memories", params={"group": "trips", "user": tenant.user})
        assert page.status_code == 200
        row = next(r for r in page.text.split("<tr") if "User flew to Oslo." in r)
        assert ">expired</span>" in row
        other = next(r for r in page.text.split("<tr") if "User sailed." in r)
        assert ">expired</span>" not in other
        listed = client.post("/v1/memories/list", json={"group": "trips", "user_id": tenant.user})
        assert listed.status_code == 200, listed.text  # Engram's list: the expired one is gone
        assert "User sailed." in listed.text and "User flew to Oslo." not in listed.text


def test_the_memory_list_badges_each_memory_in_the_browser(
    browser: Any, tenant: Tenant, live_server: Any
) -> None:
    """In a real Chromium: each row of the memory browser's list carries its producer badge
    (the model's name, or `offline` in the warning colour), and an expired memory is marked
    expired. The live server runs the scripted model; one run is relabelled `offline` in the
    database, as a run of an offline replica would be."""
    import psycopg

    from tests.console.test_browser import log_in

    group = {
        "topics": [{"name": "Trips", "description": "Trips.", "scoping": {"user_scoped": True},
                    "ttl_days": 30}],
        "pipeline": {"steps": [
            {"id": "p", "kind": "extract", "input_type": "pre_extracted", "next": "c"},
            {"id": "c", "kind": "commit"}]},
    }  # fmt: skip
    headers = {"Authorization": f"Bearer {tenant.key}"}
    runs = {}
    with httpx.Client(base_url=tenant.url, timeout=60, headers=headers) as client:
        assert client.put("/v1/groups/journeys", json=group).status_code == 200
        for content in ("User flew to Oslo.", "User sailed to Hydra.", "User hiked the Alps."):
            added = client.post("/v1/memories", json={
                "input": {"pre_extracted": {"items": [{"topic": "Trips", "content": content}]}},
                "user_id": tenant.user, "group": "journeys"})  # fmt: skip
            run = client.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
            assert run["status"] == "completed" and run["produced_by"] == "scripted", run
            runs[content] = run["run_id"]
    url = live_server.settings.database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("UPDATE runs SET produced_by = 'offline' WHERE project = %s AND run_id = %s",
                   (tenant.project, runs["User sailed to Hydra."]))  # fmt: skip
        db.execute(
            "UPDATE memories SET updated_at = updated_at - interval '31 days' "
            "WHERE project = %s AND content = 'User flew to Oslo.'", (tenant.project,)
        )  # fmt: skip

    log_in(browser, tenant, f"/console/memories?group=journeys&user={tenant.user}")
    browser.wait_for_text("Memories 1\N{EN DASH}3 of 3")
    rows = {
        row.find_element("css selector", "td.content a").text: row
        for row in browser.find_all("table.memories tbody tr")
    }
    assert set(rows) == set(runs)

    def badges(content: str) -> dict[str, str]:
        cells = rows[content].find_elements("css selector", "td.content .badge")
        return {b.text: b.get_attribute("class") or "" for b in cells}

    assert badges("User hiked the Alps.") == {"scripted": "badge badge-info producer"}
    assert badges("User sailed to Hydra.") == {"offline": "badge badge-warn producer"}
    assert badges("User flew to Oslo.") == {
        "expired": "badge badge-warn expired", "scripted": "badge badge-info producer"}  # fmt: skip
    offline = rows["User sailed to Hydra."].find_element("css selector", ".producer")
    assert offline.get_attribute("title") == "offline heuristics, not a language model"
    assert offline.is_displayed() and rows["User flew to Oslo."].find_element(
        "css selector", ".expired").is_displayed()  # fmt: skip
    browser.screenshot("memories-badges")
