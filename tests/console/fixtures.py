"""Console fixtures: a second tenant, an auth-disabled gateway, a scripted LLM that is reset
after each test, and a headless Chromium."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer, gateway_settings
from tests.console.browser import Browser, start_browser
from tests.support.scripted_llm import ScriptedLLMServer

OPEN_PROJECT = "open-project"


@pytest.fixture
def other_tenant(live_server: LiveServer) -> Tenant:
    project = f"p-{uuid.uuid4().hex[:10]}"
    return Tenant(
        live_server.url, project, live_server.create_key(project), f"user-{uuid.uuid4().hex[:8]}"
    )


@pytest.fixture
def llm(llm_server: ScriptedLLMServer) -> Iterator[ScriptedLLMServer]:
    """The live server's LLM, for scripting failures or rewrites; forgotten after the test."""
    yield llm_server
    llm_server.reset()


@pytest.fixture(scope="session")
def open_server(
    postgres: Any, llm_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A gateway with MNEMO_AUTH_DISABLED on loopback: every request acts on OPEN_PROJECT."""
    settings = gateway_settings(
        postgres.new_database("console_open"),
        Path(tmp_path_factory.mktemp("console-open")),
        auth_disabled=True,
        project=OPEN_PROJECT,
    )
    server = LiveServer(settings, llm_server).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with start_browser() as b:
        yield b
