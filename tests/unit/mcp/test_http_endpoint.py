"""/mcp without keys (auth disabled, loopback only) refuses foreign origins: DNS rebinding."""

from __future__ import annotations

import httpx

from mnemo.mcp.http import McpEndpoint
from mnemo.settings import Settings
from tests.mcp.tools import ACCEPT, INITIALIZE


async def test_a_keyless_endpoint_refuses_foreign_origins() -> None:
    settings = Settings(auth_disabled=True, host="127.0.0.1", embedding_provider="hash")
    endpoint = McpEndpoint(settings, lambda: None)  # type: ignore[arg-type, return-value]
    async with (
        endpoint.running(),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=endpoint), base_url="http://127.0.0.1:8080"
        ) as http,
    ):
        foreign = await http.post(
            "/mcp", json=INITIALIZE, headers=ACCEPT | {"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        rebound = await http.post(
            "/mcp", json=INITIALIZE, headers=ACCEPT | {"Host": "evil.example"}
        )
        assert rebound.status_code == 421
        local = await http.post(
            "/mcp", json=INITIALIZE, headers=ACCEPT | {"Origin": "http://127.0.0.1:8080"}
        )
        assert local.status_code == 200 and '"mnemo"' in local.text
