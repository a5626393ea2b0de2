"""A tombstone's judgement of raw-log records (pure: offsets first, then time)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mnemo.store.tombstones import Tombstone

AT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
STONE = Tombstone(seq=9, erased_at=AT, raw_log_position={"topic": "raw", "offsets": {"0": 5}})


def test_offsets_decide_for_the_topic_the_erase_saw() -> None:
    assert STONE.covers_raw_record("raw", 0, 4, timestamp=AT + timedelta(days=1))
    assert not STONE.covers_raw_record("raw", 0, 5, timestamp=AT - timedelta(days=1))


def test_time_decides_otherwise_and_a_record_without_time_counts_as_before() -> None:
    for topic, partition in (("other", 0), ("raw", 7)):  # no offsets for them
        assert STONE.covers_raw_record(topic, partition, 0, AT - timedelta(seconds=1))
        assert not STONE.covers_raw_record(topic, partition, 0, AT + timedelta(seconds=1))
        assert STONE.covers_raw_record(topic, partition, 0, None)
    assert Tombstone(seq=1, erased_at=AT).covers_raw_record("raw", 0, 10**9, None)
