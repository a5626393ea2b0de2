from datetime import UTC, datetime, timedelta

from mnemo.domain.pipeline import BufferTriggers
from mnemo.steps.buffering import Buffered, advance, flush_before, flush_reason

T0 = datetime(2026, 3, 1, 23, 0, tzinfo=UTC)
# A backfill: events of last year, arriving now.
THEN = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)


def at(seconds: float, base: datetime = T0) -> datetime:
    return base + timedelta(seconds=seconds)


def items(*offsets_and_topics: tuple[float, str]) -> list[Buffered]:
    """Items living in real time: each arrives when it happens."""
    return [Buffered(at(s), at(s), t) for s, t in offsets_and_topics]


def backfilled(*offsets: float, arrived: datetime = T0) -> list[Buffered]:
    """Items of last year that all arrived at `arrived`."""
    return [Buffered(at(s, THEN), arrived, "a") for s in offsets]


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
    assert flush_reason(since_first, buffered, at(99)) is None
    assert flush_reason(since_first, buffered, at(100)) == "since_first"
    idle = BufferTriggers(idle_seconds=100)
    assert flush_reason(idle, buffered, at(149)) is None
    assert flush_reason(idle, buffered, at(150)) == "idle"


def test_daily_interval_flushes_after_midnight_utc() -> None:
    daily = BufferTriggers(every_seconds=86400)
    buffered = items((0, "a"), (1800, "a"))
    assert flush_reason(daily, buffered, at(59 * 60)) is None
    assert flush_reason(daily, buffered, at(61 * 60)) == "interval"


def test_old_events_that_just_arrived_wait_for_the_wall_clock() -> None:
    """A year-old item is not overdue on arrival: nothing newer was seen in its scope."""
    buffered = backfilled(0, 30)
    for triggers in (
        BufferTriggers(idle_seconds=60),
        BufferTriggers(since_first_seconds=60),
        BufferTriggers(every_seconds=86400),
    ):
        assert flush_reason(triggers, buffered, T0, advance(None, buffered)) is None
    # The fallback: a scope that stops receiving events still flushes, by the wall clock.
    assert flush_reason(BufferTriggers(idle_seconds=60), buffered, at(60)) == "idle"
    assert flush_reason(BufferTriggers(since_first_seconds=60), buffered, at(60)) == "since_first"
    assert flush_reason(BufferTriggers(every_seconds=86400), buffered, at(3600)) == "interval"


def test_the_watermark_fires_time_triggers_in_event_time() -> None:
    buffered = backfilled(0, 30)
    idle = BufferTriggers(idle_seconds=60)
    assert flush_reason(idle, buffered, T0, at(89, THEN)) is None
    assert flush_reason(idle, buffered, T0, at(90, THEN)) == "idle"
    since_first = BufferTriggers(since_first_seconds=60)
    assert flush_reason(since_first, buffered, T0, at(60, THEN)) == "since_first"
    daily = BufferTriggers(every_seconds=86400)
    assert flush_reason(daily, buffered, T0, at(14 * 3600, THEN)) is None  # 23:00 the same day
    assert flush_reason(daily, buffered, T0, at(15 * 3600, THEN)) == "interval"  # next day


def test_the_watermark_never_lags_the_items() -> None:
    """A watermark older than the items (a stale state) counts as their latest time."""
    buffered = backfilled(0, 30)
    assert advance(at(-3600, THEN), buffered) == at(30, THEN)
    assert advance(None, []) is None
    assert flush_reason(BufferTriggers(idle_seconds=60), buffered, T0, at(-3600, THEN)) is None


def test_an_arrival_that_advances_the_watermark_past_a_trigger_closes_the_batch() -> None:
    held = backfilled(0, 30)
    idle = BufferTriggers(idle_seconds=60)
    soon, late = backfilled(60), backfilled(3600)
    assert flush_before(idle, held, at(30, THEN), soon, T0) is None
    assert flush_before(idle, held, at(30, THEN), late, T0) == "idle"
    assert flush_before(idle, [], None, late, T0) is None
    assert flush_before(idle, held, at(30, THEN), [], T0) is None


def test_an_arrival_from_another_interval_closes_the_batch_even_a_late_one() -> None:
    daily = BufferTriggers(every_seconds=86400)
    held = backfilled(0)  # 2025-06-01
    same_day, next_day, day_before = backfilled(3600), backfilled(86400), backfilled(-86400)
    assert flush_before(daily, held, at(0, THEN), same_day, T0) is None
    assert flush_before(daily, held, at(0, THEN), next_day, T0) == "interval"
    assert flush_before(daily, held, at(0, THEN), day_before, T0) == "interval"


def test_count_and_topics_triggers_fire_after_the_arrival_not_before() -> None:
    held = items((0, "task_goal"))
    triggers = BufferTriggers(count=2, topics_present=("task_goal", "feedback"))
    assert flush_before(triggers, held, at(0), items((1, "feedback")), at(1)) is None
    assert flush_reason(triggers, [*held, *items((1, "feedback"))], at(1)) == "count"
