"""The gateway's producer recovers from sequence errors, and readiness says when adds are
refused (issue 39: after a broker outage the producer stayed on OutOfOrderSequenceNumber for
3 of 4 partitions, two thirds of the adds got 503 for minutes, and /readyz said ready).
A hand-written fake producer stands in for aiokafka's; the real one is in tests/kafka."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from aiokafka.errors import KafkaTimeoutError, OutOfOrderSequenceNumber

from mnemo.core.records import RunRecord
from mnemo.domain.inputs import AddInput
from mnemo.domain.templates import group_from_template
from mnemo.kafka.transport import KafkaTransport
from mnemo.settings import KafkaSettings

NOW = datetime(2026, 12, 7, tzinfo=UTC)


class FakeClient:
    async def fetch_all_metadata(self) -> None:
        return None


class FakeProducer:
    """Refuses every send with `error` (None: acknowledges)."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.client = FakeClient()
        self.sent: list[bytes] = []
        self.started = self.stopped = False

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.stopped = True

    async def send_and_wait(self, topic: str, value: bytes, **kwargs: Any) -> None:
        if self.error is not None:
            raise self.error
        self.sent.append(value)


def record(n: int) -> RunRecord:
    return RunRecord.new(
        run_id=f"r{n}", project="p", group="default", config=group_from_template("default", "default"),
        input=AddInput.model_validate({"string": {"content": ["x"]}}), user_id="u",
        properties=None, root=None, now=NOW,
    )  # fmt: skip


def transport(producers: list[FakeProducer]) -> KafkaTransport:
    made = iter(producers)
    return KafkaTransport(KafkaSettings(), None, lambda: next(made))  # type: ignore[arg-type,return-value]


async def test_a_sequence_error_replaces_the_producer_and_the_next_add_goes_through() -> None:
    stuck, fresh = FakeProducer(OutOfOrderSequenceNumber()), FakeProducer(None)
    kt = transport([stuck, fresh])
    await kt.start_producer()
    assert await kt.check() is None
    with pytest.raises(OutOfOrderSequenceNumber):
        await kt.publish(record(1))
    assert kt.producer_restarts == 1 and fresh.started
    # Until an add is acknowledged again, readiness says adds are refused.
    assert await kt.check() == (
        "adds are refused: the broker refused the producer (OutOfOrderSequenceNumber)"
    )
    await kt.publish(record(2))  # on the new producer
    assert len(fresh.sent) == 1
    assert await kt.check() is None


async def test_other_refusals_keep_the_producer_but_make_readiness_say_so() -> None:
    slow = FakeProducer(KafkaTimeoutError())
    kt = transport([slow])
    await kt.start_producer()
    with pytest.raises(KafkaTimeoutError):
        await kt.publish(record(1))
    assert kt.producer_restarts == 0
    problem = await kt.check()
    assert problem is not None and problem.startswith("adds are refused: the broker did not ack")
    slow.error = None
    await kt.publish(record(2))
    assert await kt.check() is None


async def test_a_replacement_that_cannot_start_is_tried_again_by_the_next_add() -> None:
    class Unstartable(FakeProducer):
        async def start(self) -> None:
            raise KafkaTimeoutError()

    stuck, fresh = FakeProducer(OutOfOrderSequenceNumber()), FakeProducer(None)
    kt = transport([stuck, Unstartable(None), fresh])
    await kt.start_producer()
    with pytest.raises(OutOfOrderSequenceNumber):
        await kt.publish(record(1))
    await kt.publish(record(2))  # starts `fresh` first
    assert len(fresh.sent) == 1 and await kt.check() is None
