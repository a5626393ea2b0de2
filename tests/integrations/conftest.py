"""Fixtures of the agent-framework tests (see tests/api/fixtures.py): a live gateway whose
pipeline and whose agents' model are both the scripted OpenAI-compatible server."""

from collections.abc import AsyncIterator, Iterator

import pytest

from mnemo.client.aio import AsyncMnemoClient
from tests.api.fixtures import Tenant, live_server, llm_server, tenant
from tests.support.scripted_llm import ScriptedLLMServer

__all__ = ["Tenant", "agent_llm", "client", "live_server", "llm_server", "tenant"]

EXTRA_MISSING = "the agents extra is not installed: pip install -e '.[agents]' (make install does)"


@pytest.fixture
async def client(tenant: Tenant) -> AsyncIterator[AsyncMnemoClient]:
    async with AsyncMnemoClient(base_url=tenant.url, api_key=tenant.key, timeout=70) as mnemo:
        yield mnemo


@pytest.fixture
def agent_llm(llm_server: ScriptedLLMServer) -> Iterator[ScriptedLLMServer]:
    """The scripted server, checked to have played every agent turn a test queued."""
    yield llm_server
    left = llm_server.agent_turns_left
    llm_server.clear_agent_turns()  # a failed test's turns must not answer the next one's
    assert left == 0, f"{left} agent turns were left unplayed"
