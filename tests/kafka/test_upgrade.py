"""An upgrade in distributed mode: the database and the raw records that the previous
release's gateway left (acknowledged adds no stage had processed yet) are taken over by this
release's gateway and stages. The database is migrated from its revision; the stages read
the old records and complete every run, exactly once.

The fixtures in data/wave-2 were made by its make.sh with the release tagged `wave-2`
(47aa3f4): a `mnemo backup` of its database (schema revision 0014) and its raw records.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from mnemo.domain.requests import SearchRequest
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.kafka.gateway import start_engine
from mnemo.llm.openai_client import OpenAICompatibleLLM
from mnemo.settings import KafkaSettings, Settings
from mnemo.store.backup import read_manifest, restore_backup
from tests.kafka.conftest import BOOTSTRAP
from tests.kafka.services import STAGES, Service, stage_env
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.kafka

DATA = Path(__file__).parent / "data" / "wave-2"
# What make.sh added through the old gateway, each acknowledged as `running`.
RUNS = 3


def old_records() -> list[tuple[bytes, bytes]]:
    lines = (DATA / "raw.jsonl").read_text().splitlines()
    return [
        (base64.b64decode(r["key"]), base64.b64decode(r["value"])) for r in map(json.loads, lines)
    ]


async def test_the_new_release_takes_over_what_the_previous_one_left(
    kafka_prefix: str,
    kafka_llm: ScriptedLLMServer,
    postgres: EmbeddedPostgres,
    tmp_path: Path,
) -> None:
    assert read_manifest(DATA / "store.backup").schema_revision == "0014"
    records = old_records()
    assert len(records) == RUNS
    assert all(json.loads(value)["schema_version"] == 1 for _, value in records)
    run_ids = [json.loads(value)["run_id"] for _, value in records]

    url = postgres.new_database("upgrade")
    await restore_backup(DATA / "store.backup", url)
    prefix = f"{kafka_prefix}-up{uuid.uuid4().hex[:4]}"
    ks = KafkaSettings(bootstrap_servers=BOOTSTRAP, topic_prefix=prefix, partitions=4)
    settings = Settings(
        database_url=url, data_dir=tmp_path, embedding_provider="hash",
        reconcile_min_similarity=0.3, db_pool_size=4, auth_disabled=True, kafka=ks,
    )  # fmt: skip
    llm = OpenAICompatibleLLM(
        base_url=kafka_llm.base_url, api_key=None, model="scripted", timeout=10, max_attempts=2
    )
    # The new gateway migrates the old schema and creates this release's topics.
    engine = await start_engine(settings, llm=llm, embedder=HashEmbedder())
    services: list[Service] = []
    try:
        before = await engine.get_runs("default", run_ids)
        assert {r.run_id: r.status for r in before} == dict.fromkeys(run_ids, "running")

        producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP, enable_idempotence=True)
        await producer.start()
        try:
            for key, value in records:  # the old gateway's bytes, as they were on its topic
                await producer.send_and_wait(f"{prefix}.raw.v1", value, key=key)
        finally:
            await producer.stop()

        env = stage_env(url, kafka_llm.base_url, prefix, tmp_path)
        env["MNEMO_KAFKA_BOOTSTRAP_SERVERS"] = BOOTSTRAP
        services = [Service(name, env, tmp_path) for name in STAGES]
        for service in services:
            service.start()
        for service in services:
            await asyncio.to_thread(service.wait_ready)

        done = [await engine.wait_run("default", run_id, timeout=180) for run_id in run_ids]
        logs = "\n".join(s.tail() for s in services)
        assert [r.status for r in done] == ["completed"] * RUNS, logs
        found = await engine.search(
            "default", SearchRequest(query="bees on the library roof", user_id="alice")
        )
        assert any("bees" in m.content for m in found), [m.content for m in found]
        # Exactly once: each old run committed its memories once, not per redelivery.
        again = {
            r.run_id: r.committed_operations for r in await engine.get_runs("default", run_ids)
        }
        assert again == {r.run_id: r.committed_operations for r in done}
    finally:
        for service in services:
            service.stop()
        await engine.close()
