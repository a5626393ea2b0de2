"""The one time type every caller-supplied instant is read as (adds, messages, imports,
`as_of`): RFC 3339 within a range that every later use can hold.

Python's datetime ends at 9999-12-31 and starts at 0001-01-01 in every offset, so an
instant near either end that carries an offset (`9999-12-31T23:59:59-23:59`) cannot even
be turned into UTC; one stored near the end breaks whoever reads it back in another zone
or adds a day to it (daily intervals, a cursor, an export). Accepted instants are therefore
those whose UTC value lies in [MIN_INSTANT, MAX_INSTANT]: a day of margin at each end, so
the instant in any offset (at most ±23:59), or a day away in UTC, still fits Python and
Postgres alike.
Anything else (out of range, not a string or datetime, a number of seconds) is refused with
the field's location, as a 422.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BeforeValidator

MIN_INSTANT = datetime(1, 1, 2, tzinfo=UTC)
MAX_INSTANT = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC)
RANGE_TEXT = "0001-01-02T00:00:00Z .. 9999-12-30T23:59:59.999999Z"


def in_range(value: datetime) -> bool:
    """Whether `value` (naive: UTC) lies in the accepted range; never raises."""
    try:
        utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except (OverflowError, ValueError):
        return False
    return MIN_INSTANT <= utc <= MAX_INSTANT


def _text_or_datetime(value: Any) -> Any:
    # pydantic would also read numbers as Unix times; the wire format is RFC 3339 only.
    if isinstance(value, str | datetime):
        return value
    raise ValueError("a time must be an RFC 3339 string, e.g. 2026-12-07T10:00:00Z")


def _checked(value: datetime) -> datetime:
    if not in_range(value):
        raise ValueError(f"time out of range: accepted are UTC instants in {RANGE_TEXT}")
    return value


# A naive instant is taken to be UTC (as the Engram SDK sends it).
Instant = Annotated[datetime, BeforeValidator(_text_or_datetime), AfterValidator(_checked)]
AwareInstant = Annotated[
    AwareDatetime, BeforeValidator(_text_or_datetime), AfterValidator(_checked)
]
