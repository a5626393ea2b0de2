"""Engines on real Postgres, driven by a scripted OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.core.engine import Engine
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.llm.openai_client import OpenAICompatibleLLM
from mnemo.settings import Settings
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def engine_settings(database_url: str, data_dir: Path, **overrides: Any) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        embedding_provider="hash",
        workers=overrides.pop("workers", 8),
        bus_poll_seconds=0.05,
        buffer_tick_seconds=0.2,
        db_pool_size=10,
        # The floor on the hash embedder's scale (word overlap): the default is the bundled
        # model's, whose cosines run much higher.
        reconcile_min_similarity=overrides.pop("reconcile_min_similarity", 0.3),
        # The tests script extract and transform_with_context as two calls; the combined
        # call (tests/integration/engine/test_extract_reconcile.py) is switched on there.
        extract_reconcile_max_chars=overrides.pop("extract_reconcile_max_chars", 0),
        **overrides,
    )


def scripted_client(server: ScriptedLLMServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        base_url=server.base_url,
        api_key=None,
        model="scripted",
        timeout=10,
        max_attempts=3,
        retry_wait_scale=0.0,
    )


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def llm(llm_server: ScriptedLLMServer) -> ScriptedLLMServer:
    llm_server.reset()
    return llm_server


@pytest.fixture(scope="module")
async def offline_engine(
    postgres: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Engine]:
    """An engine on its defaults: the local embedding model and the offline LLM provider."""
    settings = Settings(
        database_url=postgres.new_database(),
        data_dir=Path(tmp_path_factory.mktemp("offline")),
        workers=2,
        bus_poll_seconds=0.05,
    )
    engine = await start_engine(settings)
    assert isinstance(engine.deps.llm, OfflineLLM)
    yield engine
    await engine.close()


@pytest.fixture(scope="session")
async def engine(
    postgres: EmbeddedPostgres,
    llm_server: ScriptedLLMServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Engine]:
    settings = engine_settings(postgres.new_database(), tmp_path_factory.mktemp("engine"))
    eng = await start_engine(settings, llm=scripted_client(llm_server), embedder=HashEmbedder())
    yield eng
    await eng.close()


@pytest.fixture
def project() -> str:
    """Every test writes to its own project, so tests never see each other's memories."""
    return f"p-{uuid.uuid4().hex[:10]}"


def user_payload(request_json: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of the user message of a scripted call."""
    user = next(m for m in request_json["messages"] if m["role"] == "user")
    return json.loads(user["content"])


def system_prompt(request_json: dict[str, Any]) -> str:
    return next(m["content"] for m in request_json["messages"] if m["role"] == "system")


def echo_extract(request_json: dict[str, Any]) -> dict[str, Any]:
    """Scripted extract: each input line becomes one UserKnowledge memory, verbatim."""
    lines = user_payload(request_json)["input"]
    return {"memories": [{"topic": "UserKnowledge", "content": line} for line in lines]}


def script_echo_pipeline(llm: ScriptedLLMServer) -> None:
    """Extract echoes the input; reconciliation keeps everything."""
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", {"existing": [], "new": []})
