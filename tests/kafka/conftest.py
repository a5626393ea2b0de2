"""The Kafka suite: a live broker on 127.0.0.1:9092 (`bash deploy/kafka/kafka.sh up`), the
gateway engine on the Kafka transport in-process, and the four stage services as
subprocesses. Topic prefixes are unique per session, so reruns never collide."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from mnemo.core.engine import Engine
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.kafka.gateway import start_engine
from mnemo.llm.openai_client import OpenAICompatibleLLM
from mnemo.settings import KafkaSettings, Settings
from tests.kafka.services import STAGES, Service, keep_up, stage_env
from tests.support.otlp import OtlpReceiver
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

# An explicit broker, or the one(s) deploy/kafka/kafka.sh runs on KAFKA_PORT (scripts/test.sh):
# KAFKA_BROKERS nodes on consecutive ports.
_PORT, BROKERS = (
    int(os.environ.get("KAFKA_PORT", "9092")),
    int(os.environ.get("KAFKA_BROKERS", "1")),
)
BOOTSTRAP = os.environ.get("MNEMO_KAFKA_BOOTSTRAP_SERVERS") or ",".join(
    f"127.0.0.1:{_PORT + i}" for i in range(BROKERS)
)

# On the 3-broker cluster (scripts/test.sh's cluster phase, KAFKA_BROKERS=3) the topics are
# replicated as production's: 3 replicas, 2 in sync for an acknowledgement.
REPLICATION, MIN_INSYNC = (3, 2) if BROKERS >= 3 else (1, 1)

GROUP = {
    "topics": [
        {"name": "Facts", "description": "Facts about the user.", "scoping": {"user_scoped": True}},
        {"name": "State", "description": "The user's current state.",
         "scoping": {"user_scoped": True}, "is_bounded": True},
    ],
    "pipeline": {"steps": [
        {"id": "extract_string", "kind": "extract", "input_type": "string", "next": "hold"},
        {"id": "hold", "kind": "buffer", "triggers": {"count": 2, "idle_seconds": 0.4},
         "next": "reconcile"},
        {"id": "reconcile", "kind": "transform_with_context", "next": "commit"},
        {"id": "pre_extracted", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip


def _broker_up() -> bool:
    host, _, port = BOOTSTRAP.split(",")[0].rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


@dataclass
class Cluster:
    engine: Engine
    settings: Settings
    ks: KafkaSettings
    services: dict[str, Service]
    llm: ScriptedLLMServer
    database_url: str
    traces: OtlpReceiver  # what the stage services export (they trace every record)


@pytest.fixture(scope="session")
def kafka_prefix() -> str:
    return new_prefix()


def new_prefix() -> str:
    """Unique topic names for a cluster; skips (fails on CI) when no broker is up."""
    if not _broker_up():
        message = f"no Kafka broker on {BOOTSTRAP}: run `bash deploy/kafka/kafka.sh up`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return f"mnemo-t{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def kafka_llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True) as server:
        yield server


@pytest.fixture(scope="session")
def otlp() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        yield receiver


@asynccontextmanager
async def running_cluster(
    prefix: str,
    llm_server: ScriptedLLMServer,
    database_url: str,
    otlp: OtlpReceiver,
    data_dir: Path,
    extra_env: dict[str, str] | None = None,
) -> AsyncIterator[Cluster]:
    """The gateway engine in-process and the four stage services as subprocesses (kept
    up by a keeper thread), on the broker at BOOTSTRAP and topics named `prefix`."""
    ks = KafkaSettings(
        bootstrap_servers=BOOTSTRAP,
        topic_prefix=prefix,
        partitions=4,
        produce_timeout_seconds=5,
        lag_interval_seconds=1,
        replication_factor=REPLICATION,
        min_insync_replicas=MIN_INSYNC,
    )
    settings = Settings(
        database_url=database_url, data_dir=data_dir, embedding_provider="hash",
        reconcile_min_similarity=0.3, db_pool_size=10, auth_disabled=True, kafka=ks,
        extract_reconcile_max_chars=0,  # two scripted calls, as stage_env says
    )  # fmt: skip
    llm = OpenAICompatibleLLM(
        base_url=llm_server.base_url, api_key=None, model="scripted", timeout=10, max_attempts=2
    )
    engine = await start_engine(settings, llm=llm, embedder=HashEmbedder())
    env = stage_env(database_url, llm_server.base_url, prefix, data_dir)
    env["MNEMO_KAFKA_BOOTSTRAP_SERVERS"] = BOOTSTRAP
    env["MNEMO_KAFKA_REPLICATION_FACTOR"] = str(REPLICATION)
    env["MNEMO_KAFKA_MIN_INSYNC_REPLICAS"] = str(MIN_INSYNC)
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = otlp.endpoint
    env["OTEL_BSP_SCHEDULE_DELAY"] = "100"  # export within 0.1 s
    env.update(extra_env or {})
    services = {name: Service(name, env, data_dir) for name in STAGES}
    stop_keeper = threading.Event()
    keeper = threading.Thread(target=keep_up, args=(list(services.values()), stop_keeper))
    try:
        for service in services.values():
            service.start()
        for service in services.values():
            await asyncio.to_thread(service.wait_ready)
        keeper.start()
        yield Cluster(engine, settings, ks, services, llm_server, database_url, otlp)
    finally:
        stop_keeper.set()
        if keeper.is_alive():
            keeper.join()
        for service in services.values():
            service.stop()
        await engine.close()


@pytest.fixture(scope="session")
async def cluster(
    kafka_prefix: str,
    kafka_llm: ScriptedLLMServer,
    postgres: EmbeddedPostgres,
    otlp: OtlpReceiver,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Cluster]:
    data_dir = tmp_path_factory.mktemp("kafka-cluster")
    database_url = postgres.new_database()
    async with running_cluster(kafka_prefix, kafka_llm, database_url, otlp, data_dir) as c:
        yield c


@pytest.fixture
async def project(cluster: Cluster) -> str:
    """A fresh project holding the test group, so tests never see each other's memories.
    Every stage service is up when the test starts, whatever an earlier test left."""
    for service in cluster.services.values():
        await asyncio.to_thread(service.ensure_running)
    name = f"p-{uuid.uuid4().hex[:10]}"
    await cluster.engine.put_group(name, "kt", GROUP)
    return name


def service_logs(cluster: Cluster) -> str:
    return "\n".join(f"--- {n}\n{s.tail()}" for n, s in cluster.services.items())


def data_root() -> Path:
    return Path(__file__).resolve().parents[2]
