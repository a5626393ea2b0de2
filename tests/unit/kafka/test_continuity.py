"""The hole rule of mnemo.kafka.continuity: which offsets a stage must have been handed."""

from __future__ import annotations

from mnemo.kafka.continuity import Continuity

TP = ("raw", 2)


def test_records_in_sequence_from_the_committed_offset_are_no_hole() -> None:
    c = Continuity()
    assert c.hole(TP, 9, generation=5, committed=9) is None
    assert c.hole(TP, 10, generation=5, committed=9) is None
    assert c.hole(TP, 11, generation=5, committed=9) is None


def test_a_first_record_past_the_committed_offset_is_a_hole() -> None:
    # faust dropped offset 9 right after the worker joined and handed over 10 first
    c = Continuity()
    assert c.hole(TP, 10, generation=5, committed=9) == 9
    c.take(TP, 10)  # the broker had no record at 9 (say, a transaction marker)
    assert c.hole(TP, 11, generation=5, committed=9) is None


def test_a_skip_inside_the_stream_is_a_hole() -> None:
    c = Continuity()
    c.hole(TP, 3, generation=1, committed=None)
    assert c.hole(TP, 5, generation=1, committed=None) == 4


def test_a_seek_back_is_taken_and_restarts_the_sequence_there() -> None:
    c = Continuity()
    for offset in (3, 4, 5):
        c.hole(TP, offset, generation=1, committed=3)
    assert c.hole(TP, 4, generation=1, committed=3) is None  # re-delivered after a seek
    assert c.hole(TP, 5, generation=1, committed=3) is None


def test_a_new_generation_starts_from_the_committed_offset_again() -> None:
    c = Continuity()
    for offset in (3, 4, 5):
        c.hole(TP, offset, generation=1, committed=3)
    # another replica took the partition and committed up to 20, then it came back here
    assert c.hole(TP, 20, generation=2, committed=20) is None
    assert c.hole(TP, 22, generation=2, committed=20) == 21


def test_partitions_are_tracked_apart_and_unknown_commits_accept_any_start() -> None:
    c = Continuity()
    assert c.hole(("raw", 0), 40, generation=1, committed=None) is None
    assert c.hole(("raw", 1), 7, generation=1, committed=7) is None
    assert c.hole(("raw", 0), 41, generation=1, committed=None) is None
