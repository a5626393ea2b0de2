"""`holds_records` against the broker: a hole with records in it, and offsets that hold none
(transaction markers), which a stage must step over rather than restart for."""

from __future__ import annotations

import uuid

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from mnemo.kafka.continuity import holds_records
from tests.kafka.conftest import BOOTSTRAP

pytestmark = pytest.mark.kafka


async def test_a_hole_with_records_and_one_of_transaction_markers(kafka_prefix: str) -> None:
    topic = f"{kafka_prefix}.probe-{uuid.uuid4().hex[:6]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP, transactional_id=topic)
    await producer.start()
    try:
        for value in (b"a", b"b"):  # each transaction: its record, then a commit marker
            async with producer.transaction():
                await producer.send_and_wait(topic, value, partition=0)
    finally:
        await producer.stop()
    # offsets: 0 "a", 1 marker, 2 "b", 3 marker
    assert await holds_records(BOOTSTRAP, topic, 0, 0, 2)  # "a" is in [0, 2)
    assert not await holds_records(BOOTSTRAP, topic, 0, 1, 2)  # only a marker at 1
