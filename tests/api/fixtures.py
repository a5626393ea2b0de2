"""Session fixtures shared by tests/api, tests/client and tests/cli (imported by their conftests).

One live gateway per importing conftest, each on its own fresh database in the session's
embedded Postgres; a fresh project, key and user per test keeps tests independent.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.live_server import LiveServer, gateway_settings
from tests.support.scripted_llm import ScriptedLLMServer


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True) as server:
        yield server


@pytest.fixture(scope="session")
def live_server(  # `postgres` (tests/conftest.py) has `new_database() -> url`
    postgres: Any, llm_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    settings = gateway_settings(postgres.new_database("api"), Path(tmp_path_factory.mktemp("api")))
    server = LiveServer(settings, llm_server).start()
    yield server
    server.stop()


@dataclass(frozen=True)
class Tenant:
    """A fresh project with its own key, plus a unique user id, for one test."""

    url: str
    project: str
    key: str
    user: str


@pytest.fixture
def tenant(live_server: LiveServer) -> Tenant:
    project = f"p-{uuid.uuid4().hex[:10]}"
    return Tenant(
        live_server.url, project, live_server.create_key(project), f"user-{uuid.uuid4().hex[:8]}"
    )


@pytest.fixture
def http(tenant: Tenant) -> Iterator[httpx.Client]:
    """Raw HTTP as the tenant, for what the SDK does not cover."""
    with httpx.Client(
        base_url=tenant.url, timeout=70, headers={"Authorization": f"Bearer {tenant.key}"}
    ) as client:
        yield client
