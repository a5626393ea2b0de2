"""A record of another installation on a stage's input (issue 39): the stage leaves its group
without processing or acknowledging it, saying so in one line that names both
installations, and a stage of the record's own installation then processes it.

It runs on topics of its own (a fresh prefix, one extractor at a time), so the record it
leaves unacknowledged blocks no partition of the shared cluster."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from mnemo.domain.inputs import AddInput
from mnemo.kafka.channels import channel_names, ensure_channels
from mnemo.kafka.events.codec import encode
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.installation import HEADER, claim_for_gateway
from mnemo.kafka.reader import producer
from mnemo.kafka.watchdog import RESTART_EXIT_CODE
from mnemo.settings import KafkaSettings
from mnemo.store.database import migrate
from tests.kafka.conftest import BOOTSTRAP, MIN_INSYNC, REPLICATION, new_prefix
from tests.kafka.services import Service, stage_env
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.kafka


async def claimed(url: str, ks: KafkaSettings) -> tuple[AsyncEngine, str]:
    """A database migrated and claimed for these topics, as its gateway would; its id."""
    await asyncio.to_thread(migrate, url, 384)
    db = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    return db, await claim_for_gateway(db, ks)


async def committed(ks: KafkaSettings, tp: TopicPartition) -> int:
    """The extractor group's committed offset on `tp` (-1: none)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    await admin.start()
    try:
        found = await admin.list_consumer_group_offsets(ks.group_id("extractor"), partitions=[tp])
    finally:
        await admin.close()
    done = found.get(tp)
    return done.offset if done is not None else -1


async def run_row(db: AsyncEngine, run_id: str) -> str | None:
    async with db.connect() as conn:
        found = await conn.execute(
            text("SELECT status FROM runs WHERE run_id = :id"), {"id": run_id}
        )
        return found.scalar_one_or_none()


async def test_a_record_of_another_installation_waits_for_a_stage_of_its_own(
    postgres: EmbeddedPostgres, kafka_llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    prefix = new_prefix()
    ks = KafkaSettings(
        bootstrap_servers=BOOTSTRAP, topic_prefix=prefix, partitions=4,
        replication_factor=REPLICATION, min_insync_replicas=MIN_INSYNC,
    )  # fmt: skip
    await ensure_channels(ks)
    # Two installations on the same topics: two gateways' databases that each claimed them.
    ours_url, theirs_url = postgres.new_database(), postgres.new_database()
    ours_db, ours = await claimed(ours_url, ks)
    theirs_db, theirs = await claimed(theirs_url, ks)
    assert ours != theirs

    run_id = f"foreign-{uuid.uuid4().hex[:8]}"
    event = RawEvent(run_id=run_id, user_id="u1", input=AddInput.model_validate(
        {"string": {"content": ["I live in Lisbon."]}}))  # fmt: skip
    p = await producer(BOOTSTRAP)
    try:
        sent = await p.send_and_wait(
            channel_names(ks).raw, encode(event), key=event.scope_key_for([]).encode(),
            headers=[(HEADER, theirs.encode())],
        )  # fmt: skip
    finally:
        await p.stop()
    tp = TopicPartition(sent.topic, sent.partition)

    def env(url: str, name: str) -> dict[str, str]:
        (tmp_path / name).mkdir()
        made = stage_env(url, kafka_llm.base_url, prefix, tmp_path / name)
        made["MNEMO_KAFKA_BOOTSTRAP_SERVERS"] = BOOTSTRAP
        made["MNEMO_KAFKA_REPLICATION_FACTOR"] = str(REPLICATION)
        made["MNEMO_KAFKA_MIN_INSYNC_REPLICAS"] = str(MIN_INSYNC)
        return made

    # A stage of our installation consumes it: it leaves at once, and says why in one line.
    wrong = Service("extractor", env(ours_url, "ours"), tmp_path / "ours")
    wrong.start()
    assert wrong.proc is not None
    try:
        for _ in range(1200):  # until it leaves (or processes the record: the failure)
            if wrong.proc.poll() is not None:
                break
            processed = await run_row(ours_db, run_id)
            assert processed is None, f"processed by another installation's stage: {processed}"
            await asyncio.sleep(0.2)
    finally:
        wrong.stop()
    out = (tmp_path / "ours" / wrong.log_name).read_text(errors="replace")
    assert wrong.proc.returncode == RESTART_EXIT_CODE, out
    assert "Traceback" not in out
    where = f"{tp.topic}[{tp.partition}]@{sent.offset}"
    said = [line for line in out.splitlines() if f"{where} belongs to installation" in line]
    assert said, out
    assert f"installation {theirs}, but this stage's database is installation {ours}" in said[0]
    assert await run_row(ours_db, run_id) is None  # not processed
    assert await committed(ks, tp) <= sent.offset  # not acknowledged

    # A stage of the record's installation, in the same group, processes it.
    stage = Service("extractor", env(theirs_url, "theirs"), tmp_path / "theirs")
    stage.start()
    try:
        await asyncio.to_thread(stage.wait_ready)
        for _ in range(600):
            if (
                await run_row(theirs_db, run_id) is not None
                and await committed(ks, tp) > sent.offset
            ):
                break
            assert stage.proc is not None and stage.proc.poll() is None, stage.tail()
            await asyncio.sleep(0.2)
        else:
            pytest.fail(f"the record's own stage did not process it\n{stage.tail()}")
    finally:
        stage.stop()
    assert await run_row(ours_db, run_id) is None
    await ours_db.dispose()
    await theirs_db.dispose()
