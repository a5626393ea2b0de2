"""Fixtures of the MCP tests: a live gateway (tests/api/fixtures.py) and MCP clients on it.

`connect(tenant)` opens an `mcp` client over one transport: Streamable HTTP to the
gateway's /mcp with the tenant's key, or stdio to a `mnemo mcp` process proxying to it.
Tests that take `transport` run over both.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.api.fixtures import Tenant, live_server, llm_server, tenant

__all__ = ["Tenant", "live_server", "llm_server", "tenant"]

ROOT = Path(__file__).resolve().parents[2]
Connect = Callable[[str, str | None], AbstractAsyncContextManager[Client]]


@asynccontextmanager
async def http_client(url: str, key: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


def stdio_parameters(url: str, key: str | None) -> StdioServerParameters:
    """`mnemo mcp` as an MCP client launches it: URL and key from the environment."""
    env = {
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_URL": url,
        **({"MNEMO_API_KEY": key} if key else {}),
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mnemo.cli.main", "mcp"], env=env
    )


@asynccontextmanager
async def stdio_client(url: str, key: str | None) -> AsyncIterator[Client]:
    async with Client(stdio_parameters(url, key), read_timeout_seconds=120) as client:
        yield client


@pytest.fixture(params=["http", "stdio"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def connect(transport: str) -> Connect:
    """Open an MCP client on the live gateway as the holder of `key`."""
    return http_client if transport == "http" else stdio_client
