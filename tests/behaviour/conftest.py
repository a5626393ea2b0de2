"""The behaviour suite: every test runs once per transport, on the same public API (the
Engine facade the SDK and HTTP API sit on) and the same scripted LLM server.

- `embedded`: the Engine with its workers and ticker in-process, on embedded Postgres.
- `kafka`: the gateway Engine on the Kafka transport and the four stage services as
  subprocesses, on the real broker (`bash deploy/kafka/kafka.sh up`); marked `kafka`, so
  scripts/test.sh runs it in its Kafka phase and the embedded half in the other.

Time triggers are kept short through settings (ticks of 0.2-0.3 s); tests wait for
outcomes and assert behaviour and order, never durations.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from mnemo.core.engine import Engine
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.openai_client import OpenAICompatibleLLM
from tests.integration.conftest import engine_settings
from tests.kafka.conftest import Cluster, new_prefix, running_cluster, service_logs
from tests.support.otlp import OtlpReceiver
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

# Both modes make the same number of LLM attempts, so `llm.fail(..., times=2)` fails a run.
ATTEMPTS = 2
# Short time triggers for both modes: the Kafka tick (the embedded ticker runs every 0.2 s,
# tests.integration.conftest.engine_settings).
TICK_SECONDS = 0.2
CONSOLIDATION_TICK_SECONDS = 0.5


@dataclass
class Mode:
    name: str
    engine: Engine
    llm: ScriptedLLMServer
    cluster: Cluster | None = None

    def logs(self) -> str:
        """What the stage services said (Kafka), for assertion messages."""
        return service_logs(self.cluster) if self.cluster is not None else ""


@pytest.fixture(scope="session")
def behaviour_llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True) as server:
        yield server


@pytest.fixture(scope="session")
async def embedded_mode(
    postgres: EmbeddedPostgres,
    behaviour_llm: ScriptedLLMServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Mode]:
    settings = engine_settings(
        postgres.new_database(),
        tmp_path_factory.mktemp("behaviour-embedded"),
        consolidation_tick_seconds=CONSOLIDATION_TICK_SECONDS,
        transient_backoff_seconds=0.5,  # as the stage services (tests.kafka.services)
    )
    llm = OpenAICompatibleLLM(
        base_url=behaviour_llm.base_url, api_key=None, model="scripted", timeout=10,
        max_attempts=ATTEMPTS, retry_wait_scale=0.0,
    )  # fmt: skip
    engine = await start_engine(settings, llm=llm, embedder=HashEmbedder())
    yield Mode("embedded", engine, behaviour_llm)
    await engine.close()


@pytest.fixture(scope="session")
async def kafka_mode(
    postgres: EmbeddedPostgres,
    behaviour_llm: ScriptedLLMServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Mode]:
    prefix = new_prefix()
    extra = {
        "MNEMO_KAFKA_BUFFER_TICK_SECONDS": str(TICK_SECONDS),
        "MNEMO_CONSOLIDATION_TICK_SECONDS": str(CONSOLIDATION_TICK_SECONDS),
        "MNEMO_LLM_MAX_ATTEMPTS": str(ATTEMPTS),
    }
    with OtlpReceiver() as otlp:
        async with running_cluster(
            prefix, behaviour_llm, postgres.new_database(),
            otlp, tmp_path_factory.mktemp("behaviour-kafka"), extra,
        ) as cluster:  # fmt: skip
            yield Mode("kafka", cluster.engine, behaviour_llm, cluster)


@pytest.fixture(params=["embedded", pytest.param("kafka", marks=pytest.mark.kafka)])
def mode(request: pytest.FixtureRequest, behaviour_llm: ScriptedLLMServer) -> Mode:
    """The transport under test, with the scripted LLM reset (echo answers unless scripted)."""
    behaviour_llm.reset()
    found: Mode = request.getfixturevalue(f"{request.param}_mode")
    if found.cluster is not None:
        for service in found.cluster.services.values():
            service.ensure_running()
    return found


@pytest.fixture
def project() -> str:
    """Every test writes to its own project, so tests never see each other's memories."""
    return f"b-{uuid.uuid4().hex[:10]}"
