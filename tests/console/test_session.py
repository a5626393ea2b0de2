"""Console sign-in, cookies and CSRF over plain HTTP (no browser)."""

from __future__ import annotations

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer
from tests.console.fixtures import OPEN_PROJECT
from tests.console.helpers import add, csrf_of, logged_in
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def test_pages_send_a_browser_without_a_key_to_the_login_page(tenant: Tenant) -> None:
    with httpx.Client(base_url=tenant.url) as client:
        for page in ("/console/memories", "/console/runs", "/console/health", "/console/groups"):
            response = client.get(page + "?x=1")
            assert response.status_code == 303, page
            assert response.headers["location"].startswith("/console/login?next=")
            assert "x%3D1" in response.headers["location"]
        partial = client.get("/console/health/panels", headers={"HX-Request": "true"})
        assert partial.status_code == 401
        assert partial.headers["hx-redirect"].startswith("/console/login?next=")
        assert "mnemo_runs_total" not in partial.text


def test_a_bad_bearer_key_is_refused(tenant: Tenant) -> None:
    with httpx.Client(base_url=tenant.url) as client:
        response = client.get("/console/runs", headers={"Authorization": "Bearer mnemo_nope"})
        assert response.status_code == 401
        assert "invalid or revoked API key" in response.text
        good = client.get("/console/runs", headers={"Authorization": f"Bearer {tenant.key}"})
        assert good.status_code == 200 and tenant.project in good.text


def test_login_sets_a_strict_http_only_cookie_and_logout_clears_it(tenant: Tenant) -> None:
    with httpx.Client(base_url=tenant.url) as client:
        token = csrf_of(client, "/console/login")
        wrong = client.post("/console/login", data={"key": "mnemo_wrong", "csrf_token": token})
        assert wrong.status_code == 401 and "invalid or revoked API key" in wrong.text
        assert "mnemo_console_key" not in client.cookies

        response = client.post(
            "/console/login",
            data={"key": tenant.key, "csrf_token": token, "next": "https://evil.example/"},
        )
        assert response.status_code == 303
        assert response.headers["location"] == "/console/memories"  # never an open redirect
        key_cookie = next(
            c for c in response.headers.get_list("set-cookie") if c.startswith("mnemo_console_key=")
        )
        attributes = {a.strip().lower() for a in key_cookie.split(";")}
        assert {"httponly", "samesite=strict", "path=/console"} <= attributes

        page = client.get("/console/memories")
        assert page.status_code == 200 and tenant.project in page.text
        assert page.headers["content-security-policy"].startswith("default-src 'self'")

        assert client.post("/console/logout").status_code == 403  # no CSRF token
        out = client.post("/console/logout", data={"csrf_token": csrf_of(client, "/console/runs")})
        assert out.status_code == 303 and out.headers["location"] == "/console/login"
        assert client.get("/console/memories").status_code == 303


def test_login_from_another_site_is_refused(tenant: Tenant) -> None:
    with httpx.Client(base_url=tenant.url) as client:
        token = csrf_of(client, "/console/login")
        response = client.post(
            "/console/login",
            data={"key": tenant.key, "csrf_token": token},
            headers={"Origin": "https://evil.example"},
        )
        assert response.status_code == 403
        assert "mnemo_console_key" not in client.cookies


def test_state_changing_forms_need_the_csrf_token_and_this_origin(
    tenant: Tenant, llm: ScriptedLLMServer
) -> None:
    llm.fail("extract", status=503, times=2)  # the live server's LLM client tries twice
    run = add(tenant, "I collect stamps")
    assert run["status"] == "failed"
    retry = f"/console/runs/{run['run_id']}/retry"
    with logged_in(tenant) as client:
        token = csrf_of(client, f"/console/runs/{run['run_id']}")
        assert client.post(retry).status_code == 403
        assert (
            client.post(retry, data={"csrf_token": "forged-token-forged-token"}).status_code == 403
        )
        cross_site = client.post(
            retry, data={"csrf_token": token}, headers={"Origin": "https://evil.example"}
        )
        assert cross_site.status_code == 403
        assert (
            client.get(f"/v1/runs/{run['run_id']}", headers=_bearer(tenant)).json()["status"]
            == "failed"
        )

        same_site = client.post(retry, data={"csrf_token": token}, headers={"Origin": tenant.url})
        assert same_site.status_code == 303
    done = httpx.get(
        f"{tenant.url}/v1/runs/{run['run_id']}", params={"wait": 30}, headers=_bearer(tenant)
    )
    assert done.json()["status"] == "completed"


def test_a_bearer_header_needs_no_csrf_token(tenant: Tenant) -> None:
    with httpx.Client(base_url=tenant.url, headers=_bearer(tenant)) as client:
        document = "topics:\n  - name: notes\n    description: Notes.\npipeline:\n  steps:\n"
        document += "    - {id: x, kind: extract, input_type: string, next: c}\n"
        document += "    - {id: c, kind: commit}\n"
        response = client.post("/console/groups/notes-bearer", data={"document": document})
        assert response.status_code == 404  # no such group yet: saving edits existing groups
        created = client.post(
            "/console/groups", data={"name": "notes-bearer", "template": "default"}
        )
        assert created.status_code == 303
        saved = client.post("/console/groups/notes-bearer", data={"document": document})
        assert saved.status_code == 303
        group = client.get("/v1/groups/notes-bearer").json()
        assert [t["name"] for t in group["topics"]] == ["notes"]


def test_with_auth_disabled_the_console_needs_no_login_but_forms_keep_csrf(
    open_server: LiveServer,
) -> None:
    with httpx.Client(base_url=open_server.url) as client:
        assert client.get("/console/login").status_code == 303
        page = client.get("/console/groups")
        assert page.status_code == 200
        assert OPEN_PROJECT in page.text and "auth disabled" in page.text
        refused = client.post("/console/groups", data={"name": "g1", "template": "default"})
        assert refused.status_code == 403
        token = csrf_of(client, "/console/groups")
        made = client.post(
            "/console/groups", data={"name": "g1", "template": "default", "csrf_token": token}
        )
        assert made.status_code == 303 and made.headers["location"] == "/console/groups/g1?saved=1"


def _bearer(tenant: Tenant) -> dict[str, str]:
    return {"Authorization": f"Bearer {tenant.key}"}
