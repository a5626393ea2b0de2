"""Every producer mnemo builds is idempotent with acks=all on the real broker (issue 39): the
broker assigned it a producer id (idempotent producers only ask for one), so a produce
retried after a lost acknowledgement is appended once. The stages' faust producer was
acks=all only before: faust passes `enable_idempotence` only to transactions."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from mnemo.kafka.app import IdempotentProducer, make_app
from mnemo.kafka.channels import channel_names, ensure_channels
from mnemo.kafka.reader import producer
from mnemo.kafka.transport import KafkaTransport
from mnemo.settings import KafkaSettings, Settings
from tests.kafka.conftest import BOOTSTRAP, MIN_INSYNC, REPLICATION, new_prefix

pytestmark = pytest.mark.kafka


def assigned_producer_id(p: AIOKafkaProducer) -> int:
    """The producer id the broker gave a started producer (-1: none asked for)."""
    txn = p._txn_manager
    assert txn is not None, "the producer is not idempotent"
    assert txn.transactional_id is None  # idempotence without transactions
    assert p._sender._acks == -1  # acks=all
    return int(txn.producer_id)


async def test_the_stages_gateway_and_tools_produce_idempotently(tmp_path: Path) -> None:
    ks = KafkaSettings(
        bootstrap_servers=BOOTSTRAP, topic_prefix=new_prefix(), partitions=4,
        replication_factor=REPLICATION, min_insync_replicas=MIN_INSYNC,
    )  # fmt: skip
    await ensure_channels(ks)
    raw = channel_names(ks).raw

    # A stage's faust producer, as `make_app` builds it for every stage service.
    app = make_app("committer", Settings(data_dir=tmp_path, kafka=ks))
    stage = app.producer
    assert isinstance(stage, IdempotentProducer)
    await stage.start()
    try:
        sent = await stage.send_and_wait(
            raw, b"k", b"{}", partition=None, timestamp=None, headers=None
        )
        assert sent.offset >= 0
        assert stage._producer is not None
        stage_id = assigned_producer_id(stage._producer)
    finally:
        await stage.stop()

    # The gateway's, and the one `mnemo dlq` and `mnemo replay` publish with.
    gateway = KafkaTransport(ks, None)  # type: ignore[arg-type]  # no database needed here
    tool = await producer(BOOTSTRAP)
    gateway_producer = gateway._real_producer()
    await gateway_producer.start()
    try:
        ids = {stage_id, assigned_producer_id(gateway_producer), assigned_producer_id(tool)}
    finally:
        await gateway_producer.stop()
        await tool.stop()
    assert min(ids) >= 0 and len(ids) == 3  # each its own id, given by the broker
