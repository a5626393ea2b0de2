"""With auth disabled (loopback only), the Host header must name this machine: a page on
another site that rebinds its DNS name to 127.0.0.1 must not reach the keyless API."""

from __future__ import annotations

import httpx
import pytest

from mnemo.gateway.app import create_app
from mnemo.settings import Settings


def _app(**values):
    return create_app(Settings(embedding_provider="hash", **values))


async def _healthz(app, host: str | None) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as client:
        headers = {"host": host} if host is not None else {}
        return await client.get("/healthz", headers=headers)


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "10.0.0.5:8080"]
)
async def test_foreign_host_refused_when_auth_is_off(host: str) -> None:
    response = await _healthz(_app(auth_disabled=True), host)
    assert response.status_code == 421, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "Host" in response.json()["detail"]


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8080", "localhost", "LOCALHOST:8080", "[::1]:8080", "127.0.0.1"]
)
async def test_loopback_hosts_accepted_when_auth_is_off(host: str) -> None:
    assert (await _healthz(_app(auth_disabled=True), host)).status_code == 200


async def test_configured_host_accepted() -> None:
    app = _app(auth_disabled=True, host="localhost")
    assert (await _healthz(app, "localhost:9000")).status_code == 200


async def test_any_host_when_auth_is_on() -> None:
    assert (await _healthz(_app(), "mnemo.internal.example:8080")).status_code == 200
