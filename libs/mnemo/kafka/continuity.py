"""Noticing records faust never handed to a stage, before the commit skips them for good.

faust 0.15.3 can drop a fetched record before its stream yields it: its stream skips records
that arrive while flow control is still suspended, which happens right after a worker joins
its group (the consumer resumes fetching a moment before the app resumes its flow). The
record is neither processed nor acknowledged, and faust's commit accepts one missing offset
right at the committed position (`Consumer._new_offset` checks `min(acked) - committed > 1`),
so acknowledging the next record commits past it: the run behind it was lost (seen after
kill -9 restarts in tests/kafka/test_kill9.py; `OrderedAcks` guards every other hole).

`Continuity` tracks, per partition, the offset a stage should take next: the committed
offset when the partition is (re)assigned, then one past each record taken. A record past
it is a hole. Offsets can also be missing for good reasons (transaction markers from an
outside producer, compaction), so the caller asks the broker whether the hole holds records
before acting (`holds_records`); if it does, the stage restarts (`watchdog.leave`) without
acknowledging anything past the hole, and its next start reads from the committed offset.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, TopicPartition

log = logging.getLogger(__name__)
PROBE_SECONDS = 15.0


@dataclass
class Continuity:
    """The next offset to take per partition. Assignments are told apart by the consumer
    group's generation: a new one starts every partition again from its committed offset."""

    _next: dict[Hashable, int] = field(default_factory=dict)
    _generation: int | None = None

    def hole(self, tp: Hashable, offset: int, generation: int, committed: int | None) -> int | None:
        """The first missing offset when `offset` arrives past the next one expected (the
        caller decides, then calls `take`); None when the record is in sequence."""
        if generation != self._generation:
            self._next.clear()
            self._generation = generation
        expected = self._next.get(tp, committed)
        if expected is not None and offset > expected:
            return expected
        self.take(tp, offset)
        return None

    def take(self, tp: Hashable, offset: int) -> None:
        """`offset` is taken (in sequence, a re-delivery after a seek back, or past a hole
        that holds no records)."""
        self._next[tp] = offset + 1


async def holds_records(bootstrap: str, topic: str, partition: int, start: int, end: int) -> bool:
    """Whether the broker has a record at an offset in [start, end) (the record at `end`
    exists, so a read from `start` returns one or the other). True when it cannot tell (the
    broker is unreachable or slow): restarting is the safe answer."""
    tp = TopicPartition(topic, partition)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        await consumer.start()
        consumer.assign([tp])
        consumer.seek(tp, start)
        fetched = await consumer.getmany(tp, timeout_ms=int(PROBE_SECONDS * 1000), max_records=1)
        records = fetched.get(tp, [])
        return not records or records[0].offset < end
    except Exception as exc:  # the broker is down: do not risk skipping a record
        log.warning("could not read %s[%d]@%d (%s)", topic, partition, start, exc)
        return True
    finally:
        await consumer.stop()
