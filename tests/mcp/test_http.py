"""The /mcp endpoint on the gateway: the same bearer keys as the REST API."""

from __future__ import annotations

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.mcp.tools import ACCEPT, INITIALIZE

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("authorization", "detail"),
    [
        (None, "missing API key"),
        ("Bearer mnemo_not-a-key", "invalid or revoked API key"),
        ("Basic dXNlcjpwdw==", "missing API key"),
    ],
)
def test_missing_or_bad_key_is_refused(
    tenant: Tenant, authorization: str | None, detail: str
) -> None:
    headers = ACCEPT | ({"Authorization": authorization} if authorization else {})
    response = httpx.post(f"{tenant.url}/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.headers["content-type"].startswith("application/problem+json")
    assert detail in response.json()["detail"]


def test_a_valid_key_initializes(tenant: Tenant) -> None:
    headers = ACCEPT | {"Authorization": f"Bearer {tenant.key}"}
    response = httpx.post(f"{tenant.url}/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 200, response.text
    assert '"name":"mnemo"' in response.text.replace(" ", "")


def test_with_keys_a_foreign_origin_is_served(tenant: Tenant) -> None:
    """A rebinding page cannot know a key; a reverse proxy may send its own Origin/Host."""
    headers = ACCEPT | {"Authorization": f"Bearer {tenant.key}", "Origin": "http://proxy.example"}
    response = httpx.post(f"{tenant.url}/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 200, response.text
