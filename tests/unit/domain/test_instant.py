"""The one time type of every entry (issue 33): RFC 3339 within a range that any offset and
any day-long step keep inside Python's datetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import TypeAdapter, ValidationError

from mnemo.domain.instant import MAX_INSTANT, MIN_INSTANT, AwareInstant, Instant, in_range
from mnemo.domain.pipeline import BufferTriggers

INSTANT = TypeAdapter(Instant)
AWARE = TypeAdapter(AwareInstant)


@pytest.mark.parametrize(
    "text",
    [
        "9999-12-31T23:59:59-23:59",  # year 10000 in UTC
        "0001-01-01T00:00:00+23:59",  # year 0 in UTC
        "9999-12-31T00:00:00Z",  # a day later would leave Python's range
        "0001-01-01T12:00:00Z",
    ],
)
def test_instants_past_either_end_are_refused(text: str) -> None:
    with pytest.raises(ValidationError, match="time out of range"):
        INSTANT.validate_python(text)
    with pytest.raises(ValidationError, match="time out of range"):
        AWARE.validate_json(f'"{text}"')


@pytest.mark.parametrize("value", [1_700_000_000, 1.5, True, None, []])
def test_only_rfc_3339_text_is_a_time(value: object) -> None:
    with pytest.raises(ValidationError):
        INSTANT.validate_python(value)


def test_the_ends_of_the_range_are_accepted_and_survive_any_offset() -> None:
    widest = timedelta(hours=23, minutes=59)
    for end in (MIN_INSTANT, MAX_INSTANT):
        assert INSTANT.validate_python(end.isoformat()) == end
        for offset in (-widest, widest):
            local = end.astimezone(timezone(offset))  # raises OverflowError if it cannot
            assert local.astimezone(UTC) == end


def test_a_naive_time_is_utc_and_in_range_never_raises() -> None:
    assert INSTANT.validate_python("2026-12-07T10:00:00") == datetime(2026, 12, 7, 10)
    assert in_range(datetime(2026, 12, 7, 10)) and in_range(datetime(2026, 12, 7, tzinfo=UTC))
    assert not in_range(datetime(9999, 12, 31, 23, 59, 59))


def test_buffer_time_triggers_are_at_most_a_century() -> None:
    assert BufferTriggers(every_seconds=86_400 * 36_500).every_seconds
    with pytest.raises(ValidationError):
        BufferTriggers(idle_seconds=1e300)
