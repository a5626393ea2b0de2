"""Repeated warnings are collapsed: the first passes, the repeats are counted, not written."""

from __future__ import annotations

import logging

from mnemo.logs import MAX_KINDS, RepeatFilter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(
    msg: str, *args: object, level: int = logging.WARNING, name: str = "w"
) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_repeats_within_the_window_are_dropped_and_counted_on_the_next_one() -> None:
    clock = Clock()
    repeat = RepeatFilter(window=10, clock=clock)
    assert repeat.filter(record("database unavailable (%s); retrying", "refused"))
    for cause in ("refused", "reset", "refused") * 100:
        clock.now += 0.01
        assert not repeat.filter(record("database unavailable (%s); retrying", cause))
    clock.now = 10.5
    later = record("database unavailable (%s); retrying", "refused")
    assert repeat.filter(later)
    assert later.getMessage() == (
        "database unavailable (refused); retrying [300 more like this in the previous 10 s]"
    )
    clock.now = 21.0
    quiet = record("database unavailable (%s); retrying", "refused")
    assert repeat.filter(quiet) and "more like this" not in quiet.getMessage()


def test_kinds_are_told_apart_and_info_is_never_collapsed() -> None:
    repeat = RepeatFilter(window=10, clock=Clock())
    assert repeat.filter(record("a %s", 1))
    assert repeat.filter(record("b %s", 1))
    assert repeat.filter(record("a %s", 1, name="other"))
    assert repeat.filter(record("a %s", 1, level=logging.ERROR))
    assert not repeat.filter(record("a %s", 2))
    assert all(repeat.filter(record("flushed %d", i, level=logging.INFO)) for i in range(50))


def test_the_count_note_leaves_formatting_alone() -> None:
    clock = Clock()
    repeat = RepeatFilter(window=10, clock=clock)
    repeat.filter(record("%d%% busy", 100))
    repeat.filter(record("%d%% busy", 99))
    clock.now = 11
    later = record("%d%% busy", 98)
    assert repeat.filter(later)
    assert later.getMessage() == "98% busy [1 more like this in the previous 10 s]"


def test_the_filter_remembers_a_bounded_number_of_kinds() -> None:
    clock = Clock()
    repeat = RepeatFilter(window=10, clock=clock)
    for i in range(MAX_KINDS * 3):
        assert repeat.filter(record(f"distinct message {i}"))
    assert len(repeat._seen) <= MAX_KINDS
