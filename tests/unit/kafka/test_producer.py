"""Every producer is idempotent with acks=all, and a stage's producer that the broker
refuses makes the stage leave (mnemo.kafka.producer, mnemo.kafka.app; issue 39). The
broker's side is checked in tests/kafka/test_idempotent_producers.py."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from aiokafka.errors import KafkaTimeoutError, NotLeaderForPartitionError, OutOfOrderSequenceNumber
from faust.exceptions import ProducerSendError

from mnemo.kafka.app import IdempotentProducer, make_app
from mnemo.kafka.producer import is_sequence_error
from mnemo.kafka.watchdog import RESTART_EXIT_CODE
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


def test_by_default_a_refused_producer_ends_the_stage_for_its_supervisor(tmp_path: Path) -> None:
    """The default reaction, in a process of its own (it ends the process)."""
    script = f"""
import asyncio
from aiokafka.errors import OutOfOrderSequenceNumber
from mnemo.kafka.app import make_app
from mnemo.settings import KafkaSettings, Settings

async def main():
    settings = Settings(data_dir={str(tmp_path)!r}, kafka=KafkaSettings(topic_prefix="unit"))
    producer = make_app("buffer", settings).producer
    sent = asyncio.get_running_loop().create_future()
    sent.add_done_callback(producer._sent)
    sent.set_exception(OutOfOrderSequenceNumber())
    await asyncio.sleep(0.1)
    print("still running")

asyncio.run(main())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == RESTART_EXIT_CODE, done.stdout + done.stderr
    assert "still running" not in done.stdout
    assert (
        "[mnemo] unit-buffer: the broker refused this stage's producer "
        "(OutOfOrderSequenceNumber); only a new producer gets past it; exiting so that the "
        "supervisor restarts this stage"
    ) in done.stderr
