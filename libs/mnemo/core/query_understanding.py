"""What a search query says besides its words: a time window and the names it mentions.

Written once for every retrieval mode (vector, bm25, hybrid) and both transports: the
engine reads the query here and hands the result to ranking (`core.recall_signals`).

- Time: absolute dates ("in 2022", "in May 2023", "on 8 May, 2023", "May 23, 2023") and the
  relative ones the offline date parser resolves ("last May", "last year", "three weeks
  ago", "yesterday"; `llm.offline.dates`) become a window of days, resolved against a
  reference time (the query's `as_of`, else now). A month without a year ("in June") is
  the most recent such month up to the reference. Event-relative expressions ("before the
  wedding") are not resolved: they need the event's own time, which the query does not say.
- Names: capitalised words that do not open the sentence and are not question words,
  months or weekdays ("What did Caroline paint?" -> caroline), lower-cased.

Regular expressions, not understanding: a query with neither yields an empty `QueryIntent`
and ranking is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from mnemo.llm.offline.dates import resolve_relative_dates

MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTH = rf"({'|'.join(MONTHS)}|{'|'.join(m[:3] for m in MONTHS)})\.?"
_YEAR = r"((?:19|20)\d\d)"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Capitalised words that are not names: question words, pronouns, months and weekdays.
_NOT_NAMES = (
    frozenset(
        "what when where which who whom whose why how did does do is are was were can could "
        "would should will has have had the a an i me my we our you your he she his her they "
        "their it its in on at of for to and or but if this that these those there here "
        "last next ago since before after during".split()
    )
    | frozenset(MONTHS)
    | frozenset(m[:3] for m in MONTHS)
    | frozenset(_WEEKDAYS)
)
_WORD = re.compile(r"[A-Za-z][\w'\u2019-]*")
_POSSESSIVE = re.compile(r"['\u2019]s?$")


@dataclass(frozen=True)
class Window:
    """Whole days from `start` to `end` inclusive (UTC)."""

    start: date
    end: date

    def overlaps(self, first: datetime | None, last: datetime | None) -> bool:
        if first is None:
            return False
        begin = first.astimezone(UTC).date()
        finish = (last or first).astimezone(UTC).date()
        return begin <= self.end and finish >= self.start


@dataclass(frozen=True)
class QueryIntent:
    """The time windows and names a query mentions (both may be empty)."""

    windows: tuple[Window, ...] = ()
    names: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not self.windows and not self.names


def _month_index(token: str) -> int:
    token = token.lower().rstrip(".")
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(token))


def _month_window(year: int, month: int) -> Window:
    following = date(year + month // 12, month % 12 + 1, 1)
    return Window(date(year, month, 1), following - timedelta(days=1))


def _day(year: int, month: int, day: int) -> Window | None:
    try:
        one = date(year, month, day)
    except ValueError:
        return None
    return Window(one, one)


# Absolute dates, most specific first; each match is removed before the next pattern runs.
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+{_YEAR}\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I)
_AROUND_DAY = re.compile(r"\baround (\d{4})-(\d{2})-(\d{2})\b")
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{2})\b")
_YEAR_ALONE = re.compile(rf"\b(?:in|of|during|since|from)\s+{_YEAR}\b", re.I)
_LAST_MONTH_NAME = re.compile(rf"\blast\s+{_MONTH}\b", re.I)
_MONTH_ALONE = re.compile(rf"\b(?:in|during|since|of)\s+{_MONTH}\b", re.I)
_WEEK_OF = re.compile(r"\bweek of (\d{4})-(\d{2})-(\d{2})\b")
_SEASON_OF = re.compile(r"\b(spring|summer|autumn|fall|winter) of (\d{4})\b")
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _absolute(text: str) -> tuple[list[Window], str]:
    """Windows of the absolute dates in `text`, and `text` without them."""
    found: list[Window] = []

    def take(pattern: re.Pattern[str], make: object) -> None:
        nonlocal text

        def replace(match: re.Match[str]) -> str:
            window = make(match)  # type: ignore[operator]
            if window is not None:
                found.append(window)
            return " "

        text = pattern.sub(replace, text)

    take(_WEEK_OF, lambda m: _week(int(m[1]), int(m[2]), int(m[3])))
    take(_SEASON_OF, lambda m: _season(m[1].lower(), int(m[2])))
    take(_AROUND_DAY, lambda m: _around(int(m[1]), int(m[2]), int(m[3])))
    take(_ISO_DAY, lambda m: _day(int(m[1]), int(m[2]), int(m[3])))
    take(
        _ISO_MONTH, lambda m: _month_window(int(m[1]), int(m[2])) if 1 <= int(m[2]) <= 12 else None
    )
    take(_DAY_MONTH_YEAR, lambda m: _day(int(m[3]), _month_index(m[2]), int(m[1])))
    take(_MONTH_DAY_YEAR, lambda m: _day(int(m[3]), _month_index(m[1]), int(m[2])))
    take(_MONTH_YEAR, lambda m: _month_window(int(m[2]), _month_index(m[1])))
    take(_YEAR_ALONE, lambda m: Window(date(int(m[1]), 1, 1), date(int(m[1]), 12, 31)))
    return found, text


def _week(year: int, month: int, day: int) -> Window | None:
    monday = _day(year, month, day)
    return None if monday is None else Window(monday.start, monday.start + timedelta(days=6))


def _around(year: int, month: int, day: int) -> Window | None:
    one = _day(year, month, day)
    return (
        None if one is None else Window(one.start - timedelta(days=3), one.end + timedelta(days=3))
    )


def _season(name: str, year: int) -> Window:
    first = _month_window(year, _SEASON_START[name])
    index = year * 12 + _SEASON_START[name] - 1 + 2
    last = _month_window(index // 12, index % 12 + 1)
    return Window(first.start, last.end)


def _recent_month(month: int, today: date, strictly_before: bool) -> Window:
    """The latest `month` starting before `today` (ending before it with `strictly_before`)."""
    year = today.year
    window = _month_window(year, month)
    while window.start > today or (strictly_before and window.end >= today):
        year -= 1
        window = _month_window(year, month)
    return window


def time_windows(text: str, reference: datetime) -> list[Window]:
    """The day windows the time expressions of `text` name, resolved against `reference`."""
    today = reference.astimezone(UTC).date()
    windows: list[Window] = []
    # "last May" first: the month before this one's, which the offline parser does not read.
    for match in _LAST_MONTH_NAME.finditer(text):
        windows.append(_recent_month(_month_index(match[1]), today, True))
    text = _LAST_MONTH_NAME.sub(" ", text)
    # The offline parser rewrites relative dates into absolute ones ("on 2025-03-09",
    # "in 2025-03", "in the week of 2025-03-03", "in 2024", "in the spring of 2024").
    found, rest = _absolute(resolve_relative_dates(text, today))
    windows += found
    for match in _MONTH_ALONE.finditer(rest):
        windows.append(_recent_month(_month_index(match[1]), today, False))
    return windows


def names(text: str) -> frozenset[str]:
    """Capitalised words past the first that are not question words, months or weekdays."""
    words = _WORD.findall(text)
    return frozenset(
        _POSSESSIVE.sub("", w.lower())
        for w in words[1:]
        if w[0].isupper() and w.lower() not in _NOT_NAMES and len(w) > 1
    )


def understand(text: str, reference: datetime) -> QueryIntent:
    """The query's time windows (against `reference`) and the names it mentions."""
    return QueryIntent(tuple(time_windows(text, reference)), names(text))
