"""Relative dates resolved against the date a sentence was written: regular expressions, not
understanding.

"User went hiking yesterday." written on 2025-03-10 becomes "User went hiking on 2025-03-09.".
Handled: today / tonight, yesterday, the day before yesterday, tomorrow, the day after
tomorrow, "N days / weeks / months / years ago", last / this / next week, month and year,
last / next <weekday>, and last <season> (meteorological seasons of the northern hemisphere:
spring is March to May). Anything else ("recently", "a while back", "on Monday") is left as
written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip


def _months_back(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 - months
    return date(index // 12, index % 12 + 1, 1)


def _on(day: date) -> str:
    return f"on {day.isoformat()}"


def _ago(amount: str, unit: str, day: date) -> str:
    n = int(amount) if amount.isdigit() else _NUMBERS[amount.lower()]
    unit = unit.lower().rstrip("s")
    if unit == "day":
        return _on(day - timedelta(days=n))
    if unit == "week":
        return f"around {(day - timedelta(weeks=n)).isoformat()}"
    if unit == "month":
        return f"in {_months_back(day, n).strftime('%Y-%m')}"
    return f"in {day.year - n}"


def _relative_period(which: str, unit: str, day: date) -> str:
    step = {"last": -1, "this": 0, "next": 1}[which.lower()]
    unit = unit.lower()
    if unit == "week":
        monday = day - timedelta(days=day.weekday()) + timedelta(weeks=step)
        return f"in the week of {monday.isoformat()}"
    if unit == "month":
        return f"in {_months_back(day, -step).strftime('%Y-%m')}"
    return f"in {day.year + step}"


def _weekday(which: str, name: str, day: date) -> str:
    target = _WEEKDAYS.index(name.lower())
    if which.lower() == "last":
        back = (day.weekday() - target) % 7 or 7
        return _on(day - timedelta(days=back))
    ahead = (target - day.weekday()) % 7 or 7
    return _on(day + timedelta(days=ahead))


def _last_season(name: str, day: date) -> str:
    """The most recent such season that ended before `day`."""
    start_month = _SEASON_START[name.lower()]
    year = day.year
    while True:
        start = date(year, start_month, 1)
        end = _months_back(start, -3)  # the first day after the season
        if end <= day:
            label = f"{year}/{year + 1}" if start_month == 12 else str(year)
            return f"in the {name.lower()} of {label}"
        year -= 1


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], str]]
_RULES: list[_Rule] = [
    (re.compile(r"\bthe day before yesterday\b", re.I), lambda m, d: _on(d - timedelta(days=2))),
    (re.compile(r"\bthe day after tomorrow\b", re.I), lambda m, d: _on(d + timedelta(days=2))),
    (re.compile(r"\byesterday\b", re.I), lambda m, d: _on(d - timedelta(days=1))),
    (re.compile(r"\btomorrow\b", re.I), lambda m, d: _on(d + timedelta(days=1))),
    (re.compile(r"\b(?:today|tonight)\b", re.I), lambda m, d: _on(d)),
    (
        re.compile(rf"\b(\d+|{'|'.join(_NUMBERS)})\s+(days?|weeks?|months?|years?)\s+ago\b", re.I),
        lambda m, d: _ago(m.group(1), m.group(2), d),
    ),
    (
        re.compile(r"\b(last|this|next)\s+(week|month|year)\b", re.I),
        lambda m, d: _relative_period(m.group(1), m.group(2), d),
    ),
    (
        re.compile(rf"\b(last|next)\s+({'|'.join(_WEEKDAYS)})\b", re.I),
        lambda m, d: _weekday(m.group(1), m.group(2), d),
    ),
    (
        re.compile(rf"\blast\s+({'|'.join(_SEASON_START)})\b", re.I),
        lambda m, d: _last_season(m.group(1), d),
    ),
]


def resolve_relative_dates(sentence: str, written_on: date) -> str:
    """`sentence` with the relative dates it holds made absolute (see the module docstring)."""
    for pattern, replace in _RULES:
        sentence = pattern.sub(lambda m, r=replace: r(m, written_on), sentence)  # type: ignore[misc]
    if sentence[:3] in ("on ", "in ") or sentence.startswith("around "):
        sentence = sentence[0].upper() + sentence[1:]
    return sentence
