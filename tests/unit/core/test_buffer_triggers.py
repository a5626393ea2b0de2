from datetime import UTC, datetime, timedelta

from mnemo.core.buffering import Buffered, flush_reason
from mnemo.domain.pipeline import BufferTriggers

T0 = datetime(2026, 3, 1, 23, 0, tzinfo=UTC)


def items(*offsets_and_topics: tuple[float, str]) -> list[Buffered]:
    return [Buffered(T0 + timedelta(seconds=s), t) for s, t in offsets_and_topics]


def test_empty_buffer_never_flushes() -> None:
    assert flush_reason(BufferTriggers(count=1), [], T0) is None


def test_count() -> None:
    triggers = BufferTriggers(count=3)
    assert flush_reason(triggers, items((0, "a"), (1, "a")), T0) is None
    assert flush_reason(triggers, items((0, "a"), (1, "a"), (2, "b")), T0) == "count"


def test_topics_present_needs_all_of_them() -> None:
    triggers = BufferTriggers(topics_present=("feedback", "task_goal"))
    assert flush_reason(triggers, items((0, "task_goal"), (1, "actions")), T0) is None
    assert flush_reason(triggers, items((0, "task_goal"), (1, "feedback")), T0) == "topics_present"


def test_since_first_and_idle() -> None:
    buffered = items((0, "a"), (50, "a"))
    since_first = BufferTriggers(since_first_seconds=100)
    assert flush_reason(since_first, buffered, T0 + timedelta(seconds=99)) is None
    assert flush_reason(since_first, buffered, T0 + timedelta(seconds=100)) == "since_first"
    idle = BufferTriggers(idle_seconds=100)
    assert flush_reason(idle, buffered, T0 + timedelta(seconds=149)) is None
    assert flush_reason(idle, buffered, T0 + timedelta(seconds=150)) == "idle"


def test_daily_interval_flushes_after_midnight_utc() -> None:
    daily = BufferTriggers(every_seconds=86400)
    buffered = items((0, "a"), (1800, "a"))
    assert flush_reason(daily, buffered, T0 + timedelta(minutes=59)) is None
    assert flush_reason(daily, buffered, T0 + timedelta(minutes=61)) == "interval"
