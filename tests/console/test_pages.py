"""Console pages over plain HTTP: what they show, project isolation, inline errors."""

from __future__ import annotations

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.console.helpers import add, memory_id_of

pytestmark = pytest.mark.integration


def _client(tenant: Tenant) -> httpx.Client:
    return httpx.Client(
        base_url=tenant.url, timeout=60, headers={"Authorization": f"Bearer {tenant.key}"}
    )


def test_a_key_never_sees_another_projects_memories_runs_or_groups(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    theirs = add(other_tenant, "I keep bees in Lyon")
    memory_id = memory_id_of(theirs)
    with _client(other_tenant) as client:
        assert (
            client.put("/v1/groups/secret-group", json={"template": "default"}).status_code == 200
        )
        own = client.get("/console/memories", params={"user": other_tenant.user})
        assert "I keep bees in Lyon" in own.text
        assert theirs["run_id"] in client.get("/console/runs").text

    with _client(tenant) as client:
        for params in ({}, {"user": other_tenant.user}):
            page = client.get("/console/memories", params=params)
            assert page.status_code == 200 and "bees" not in page.text
        search = client.get(
            "/console/memories",
            params={"mode": "bm25", "q": "bees Lyon", "user": other_tenant.user},
        )
        assert search.status_code == 200 and "I keep bees" not in search.text
        assert "0 results" in search.text
        detail = client.get(f"/console/memories/{memory_id}", params={"user": other_tenant.user})
        assert detail.status_code == 404 and "bees" not in detail.text
        assert theirs["run_id"] not in client.get("/console/runs").text
        assert client.get(f"/console/runs/{theirs['run_id']}").status_code == 404
        assert client.post(f"/console/runs/{theirs['run_id']}/retry").status_code == 404
        assert client.get("/console/groups/secret-group").status_code == 404
        assert "secret-group" not in client.get("/console/groups").text


def test_browse_search_and_open_a_memory(tenant: Tenant) -> None:
    first = add(tenant, "I play the cello on Sundays", properties={"team": "strings"})
    add(tenant, "I am learning Portuguese")
    with _client(tenant) as client:
        browse = client.get("/console/memories", params={"user": tenant.user})
        assert browse.status_code == 200
        assert "Memories 1\N{EN DASH}2 of 2" in browse.text
        assert "User said: I play the cello on Sundays" in browse.text
        assert "User said: I am learning Portuguese" in browse.text

        topic = client.get(
            "/console/memories", params={"user": tenant.user, "topic": "UserProfile"}
        )
        assert "No memories" in topic.text

        for mode in ("bm25", "vector", "hybrid"):
            found = client.get(
                "/console/memories", params={"user": tenant.user, "mode": mode, "q": "cello"}
            )
            assert found.status_code == 200, mode
            assert "cello" in found.text, mode

        bad = client.get("/console/memories", params={"user": tenant.user, "properties": "team"})
        assert bad.status_code == 400 and "&#39;team&#39; is not key=value" in bad.text
        blank = client.get("/console/memories", params={"mode": "bm25", "user": tenant.user})
        assert blank.status_code == 400 and "a bm25 search needs a query" in blank.text
        unscoped = client.get("/console/memories", params={"mode": "bm25", "q": "cello"})
        assert unscoped.status_code == 400 and "needs user_id" in unscoped.text

        memory_id = memory_id_of(first)
        detail = client.get(f"/console/memories/{memory_id}", params={"user": tenant.user})
        assert detail.status_code == 200
        assert "I play the cello on Sundays" in detail.text
        assert f"/console/runs/{first['run_id']}" in detail.text  # provenance links its run
        fragment = client.get(
            "/console/memories", params={"user": tenant.user}, headers={"HX-Request": "true"}
        )
        assert "<html" not in fragment.text and "cello" in fragment.text


def test_runs_list_filters_and_the_run_page_shows_operations(tenant: Tenant) -> None:
    run = add(tenant, "I moved to Porto")
    memory_id = memory_id_of(run)
    with _client(tenant) as client:
        completed = client.get("/console/runs", params={"status": "completed"})
        assert run["run_id"][:8] in completed.text
        assert (
            run["run_id"][:8] not in client.get("/console/runs", params={"status": "failed"}).text
        )
        assert run["run_id"][:8] not in client.get("/console/runs", params={"user": "nobody"}).text
        assert client.get("/console/runs", params={"status": "done"}).status_code == 400
        assert client.get("/console/runs", params={"before": "garbage"}).status_code == 400
        page = client.get(f"/console/runs/{run['run_id']}")
        assert page.status_code == 200
        assert memory_id in page.text and "I moved to Porto" in page.text  # operation + input
        assert 'id="retry"' not in page.text  # only failed runs retry
        assert client.get("/console/dlq").status_code == 404  # embedded mode has no DLQ


def test_runs_page_through_older_runs(tenant: Tenant) -> None:
    ids = [add(tenant, f"I note fact {i}", wait=False)["run_id"] for i in range(53)]
    with _client(tenant) as client:
        first = client.get("/console/runs")
        assert first.text.count('href="/console/runs/') == 50
        older = first.text.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0]
        second = client.get(older.replace("&amp;", "&"))
        assert second.text.count('href="/console/runs/') == 3
    shown = {i[:8] for i in ids if i[:8] in first.text} | {
        i[:8] for i in ids if i[:8] in second.text
    }
    assert len(shown) == 53


def test_invalid_group_config_is_shown_inline_and_nothing_is_stored(tenant: Tenant) -> None:
    with _client(tenant) as client:
        client.put("/v1/groups/notes", json={"template": "default"}).raise_for_status()
        before = client.get("/v1/groups/notes").json()
        broken = "topics:\n  - name: notes\n    description: Notes.\npipeline:\n  steps:\n"
        broken += "    - {id: x, kind: extract, input_type: string, next: nowhere}\n"
        broken += "    - {id: c, kind: commit}\n"
        page = client.post("/console/groups/notes", data={"document": broken})
        assert page.status_code == 400
        assert 'id="editor-errors"' in page.text
        assert "names unknown next step &#39;nowhere&#39;" in page.text
        assert "next: nowhere" in page.text  # the editor keeps what was typed
        not_yaml = client.post("/console/groups/notes", data={"document": "topics: [unclosed"})
        assert not_yaml.status_code == 400 and "not valid YAML or JSON" in not_yaml.text
        extra = client.post("/console/groups/notes", data={"document": "colour: blue"})
        assert extra.status_code == 400 and "document.colour" in extra.text
        assert client.get("/v1/groups/notes").json() == before


def test_group_page_draws_the_pipeline(tenant: Tenant) -> None:
    with _client(tenant) as client:
        page = client.get("/console/groups/default")
        assert page.status_code == 200
        svg = page.text.split('<svg class="pipeline"', 1)[1].split("</svg>", 1)[0]
        for step in ("extract_conversation", "extract_string", "reconcile", "commit"):
            assert f">{step}<" in svg
        assert svg.count('class="edge"') == 3 + 4  # 3 inputs enter, 4 next links


def test_health_shows_the_series_of_metrics(tenant: Tenant) -> None:
    add(tenant, "I drink oolong")
    with _client(tenant) as client:
        scraped = client.get("/metrics").text
        assert 'mnemo_runs_total{status="completed"}' in scraped
        page = client.get("/console/health")
        assert page.status_code == 200
        assert "mnemo_runs_total" in page.text and "mnemo_llm_calls_total" in page.text
        panels = client.get("/console/health/panels")
        assert "<html" not in panels.text
        assert "extract" in panels.text  # the LLM prompt table
        assert "completed" in panels.text


def test_static_files_are_served_without_a_key_and_unknown_pages_are_404(tenant: Tenant) -> None:
    with httpx.Client(base_url=tenant.url) as client:
        htmx = client.get("/console/static/htmx.min.js")
        assert htmx.status_code == 200 and "javascript" in htmx.headers["content-type"]
        assert htmx.text.startswith("var htmx=function()")
        assert client.get("/console/static/console.css").status_code == 200
        assert "Zero-Clause BSD" in client.get("/console/static/htmx.LICENSE.txt").text
    with _client(tenant) as client:
        missing = client.get("/console/no/such/page")
        assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
        assert "the console has no page" in missing.text


def test_an_erased_users_run_page_says_so_and_shows_none_of_the_input(tenant: Tenant) -> None:
    run = add(tenant, "I moved to Faro", properties={"device": "tablet"})
    with _client(tenant) as client:
        assert client.delete(f"/v1/users/{tenant.user}").status_code == 200
        page = client.get(f"/console/runs/{run['run_id']}")
    assert page.status_code == 200 and "erased with its user" in page.text
    assert "Faro" not in page.text and "tablet" not in page.text and tenant.user not in page.text


def test_the_login_page_says_which_key_to_paste_and_where_make_run_printed_it(
    tenant: Tenant,
) -> None:
    import inspect

    from mnemo.cli import serving

    with httpx.Client(base_url=tenant.url) as client:
        page = client.get("/console/login").text
    assert "starts with <code>mnemo_</code>" in page and "make run" in page
    # The line quoted is the one `mnemo serve` (what `make run` starts) prints.
    printed = "created a local API key: "
    assert printed in inspect.getsource(serving.announce)
    assert f"{printed}mnemo_…" in page and "MNEMO_API_KEY=mnemo_…" in page
    assert "mnemo keys create --name console" in page
