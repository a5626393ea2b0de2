"""Every producer is idempotent with acks=all, and a stage's producer that the broker
refuses makes the stage leave (mnemo.kafka.producer, mnemo.kafka.app; issue 39). The
broker's side is checked in tests/kafka/test_idempotent_producers.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiokafka.errors import KafkaTimeoutError, NotLeaderForPartitionError, OutOfOrderSequenceNumber
from faust.exceptions import ProducerSendError

from mnemo.kafka.app import IdempotentProducer, make_app
from mnemo.kafka.producer import is_sequence_error
from mnemo.settings import KafkaSettings, Settings


def test_sequence_errors_are_told_from_other_broker_failures() -> None:
    assert is_sequence_error(OutOfOrderSequenceNumber())
    try:  # faust raises its own error from aiokafka's when a send cannot be queued
        raise ProducerSendError("Error while sending") from OutOfOrderSequenceNumber()
    except ProducerSendError as wrapped:
        assert is_sequence_error(wrapped)
    assert not is_sequence_error(KafkaTimeoutError())
    assert not is_sequence_error(NotLeaderForPartitionError())
    assert not is_sequence_error(None)


@pytest.fixture
def producer(tmp_path: Path) -> IdempotentProducer:
    settings = Settings(data_dir=tmp_path, kafka=KafkaSettings(topic_prefix="unit"))
    app = make_app("committer", settings)
    made = app.producer
    assert isinstance(made, IdempotentProducer)
    return made


async def test_the_stage_app_builds_an_idempotent_acks_all_producer(
    producer: IdempotentProducer,
) -> None:
    built = producer._new_producer()  # aiokafka's producer, as faust starts it
    try:
        assert built._txn_manager is not None  # aiokafka's idempotence state
        assert built._txn_manager.transactional_id is None  # no transactions
        assert built._sender._acks == -1  # all
    finally:
        await built.stop()


async def test_a_refused_sequence_makes_the_stage_leave_and_nothing_else_does(
    producer: IdempotentProducer,
) -> None:
    refused: list[tuple[str, str]] = []
    producer.on_refused = lambda app_id, exc: refused.append((app_id, type(exc).__name__))
    loop = asyncio.get_running_loop()
    for outcome in (None, KafkaTimeoutError(), OutOfOrderSequenceNumber()):
        sent: asyncio.Future[None] = loop.create_future()
        sent.add_done_callback(producer._sent)
        if outcome is None:
            sent.set_result(None)
        else:
            sent.set_exception(outcome)
            sent.exception()  # retrieved: no "never retrieved" warning
        await asyncio.sleep(0)  # the callbacks run
    cancelled: asyncio.Future[None] = loop.create_future()
    cancelled.add_done_callback(producer._sent)
    cancelled.cancel()
    await asyncio.sleep(0)
    group = KafkaSettings(topic_prefix="unit").group_id("committer")
    assert refused == [(group, "OutOfOrderSequenceNumber")]
