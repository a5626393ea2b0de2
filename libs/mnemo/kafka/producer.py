"""How every Kafka producer of mnemo is built, and the one rule for a producer the broker
refuses (issue 39).

Every producer (the gateway's, the stages' faust producer, `mnemo dlq` and `mnemo replay`)
is idempotent with acks=all (`IDEMPOTENT`): the broker appends a batch once per producer id
and sequence number, so a produce the client retries after a lost acknowledgement (a broker
restart, a leader change) never writes a second copy.

Idempotence has a failure of its own. After some broker outages the broker no longer accepts
the producer's sequence state (`OutOfOrderSequenceNumber` and its kin, `SEQUENCE_ERRORS`).
aiokafka then fails every later batch of that partition the same way: a retry never helps,
only a new producer (a new producer id starts new sequences) gets past it. The gateway
replaces its producer (`mnemo.kafka.transport`); a stage leaves and is restarted by its
supervisor with a new one (`mnemo.kafka.app.IdempotentProducer`).
"""

from __future__ import annotations

from typing import Any

from aiokafka.errors import (
    DuplicateSequenceNumber,
    InvalidProducerEpoch,
    InvalidProducerIdMapping,
    OutOfOrderSequenceNumber,
    ProducerFenced,
    UnknownProducerId,
)

# aiokafka's producer settings for acks=all with idempotence (it refuses other acks with it).
IDEMPOTENT: dict[str, Any] = {"acks": "all", "enable_idempotence": True}

# The broker refuses the producer's idempotence state: only a new producer gets past it.
SEQUENCE_ERRORS = (
    OutOfOrderSequenceNumber, DuplicateSequenceNumber, InvalidProducerEpoch,
    InvalidProducerIdMapping, UnknownProducerId, ProducerFenced,
)  # fmt: skip


def is_sequence_error(exc: BaseException | None) -> bool:
    """True when `exc`, or an error it was raised from (faust wraps aiokafka's errors in
    its own), says the broker refuses the producer's sequence state."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, SEQUENCE_ERRORS):
            return True
        exc, seen = exc.__cause__, seen + 1
    return False
