"""Adding memories through the REST API and talking to the console over plain HTTP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.api.fixtures import Tenant


def api(tenant: Tenant) -> httpx.Client:
    return httpx.Client(
        base_url=tenant.url, timeout=60, headers={"Authorization": f"Bearer {tenant.key}"}
    )


def add(tenant: Tenant, text: str, *, wait: bool = True, **extra: Any) -> dict[str, Any]:
    """One string add for the tenant's user; the run once terminal (or as acknowledged)."""
    body = {"input": {"string": {"content": [text]}}, "user_id": tenant.user, **extra}
    with api(tenant) as client:
        response = client.post("/v1/memories", json=body)
        assert response.status_code == 200, response.text
        run_id = response.json()["run_id"]
        if not wait:
            return dict(response.json())
        run = client.get(f"/v1/runs/{run_id}", params={"wait": 30}).json()
    assert run["status"] in ("completed", "failed"), run
    return dict(run)


def memory_id_of(run: dict[str, Any]) -> str:
    return str(run["committed_operations"]["created"][0]["memory_id"])


def csrf_of(client: httpx.Client, page: str) -> str:
    """The CSRF token in a console page's form (the cookie is set by the same response)."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(page).text)
    assert found, f"no CSRF token on {page}"
    return found.group(1)


@contextmanager
def logged_in(tenant: Tenant) -> Iterator[httpx.Client]:
    """A console client that signed in through the login form (cookies only, no header)."""
    with httpx.Client(base_url=tenant.url, timeout=60) as client:
        token = csrf_of(client, "/console/login")
        response = client.post(
            "/console/login",
            data={"key": tenant.key, "csrf_token": token, "next": "/console/runs"},
        )
        assert response.status_code == 303, response.text
        yield client
