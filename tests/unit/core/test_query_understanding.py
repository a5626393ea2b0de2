"""Time windows and names read from a search query (mnemo.core.query_understanding)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from mnemo.core.query_understanding import Window, names, time_windows, understand

NOW = datetime(2026, 12, 7, 9, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did I buy in 2022?", [Window(date(2022, 1, 1), date(2022, 12, 31))]),
        ("What did she paint in July 2023?", [Window(date(2023, 7, 1), date(2023, 7, 31))]),
        ("Who came on 8 May, 2023?", [Window(date(2023, 5, 8), date(2023, 5, 8))]),
        ("Who came on May 23rd, 2023?", [Window(date(2023, 5, 23), date(2023, 5, 23))]),
        ("What happened on 2024-02-29?", [Window(date(2024, 2, 29), date(2024, 2, 29))]),
        # relative to the reference time, through the offline date parser
        ("What did I cook last May?", [Window(date(2026, 5, 1), date(2026, 5, 31))]),
        ("Where did we go last year?", [Window(date(2025, 1, 1), date(2025, 12, 31))]),
        ("What did I do yesterday?", [Window(date(2026, 12, 6), date(2026, 12, 6))]),
        ("What did I read last month?", [Window(date(2026, 11, 1), date(2026, 11, 30))]),
        ("What did I read three weeks ago?", [Window(date(2026, 11, 13), date(2026, 11, 19))]),
        # a month alone is the latest one up to now; "last December" the one before this one
        ("Where did I go camping in June?", [Window(date(2026, 6, 1), date(2026, 6, 30))]),
        ("What did I give last December?", [Window(date(2025, 12, 1), date(2025, 12, 31))]),
        ("What did I give in December?", [Window(date(2026, 12, 1), date(2026, 12, 31))]),
    ],
)
def test_time_expressions_become_windows(query: str, expected: list[Window]) -> None:
    assert time_windows(query, NOW) == expected


@pytest.mark.parametrize(
    "query",
    [
        "What did I do before the wedding?",  # event-relative: the event's time is unknown
        "How many books did I read?",
        "What is my favourite colour?",
        "May I ask what my budget is?",  # "May" opens the sentence: not a month here
        "What did I do on 2023-02-30?",  # no such day
    ],
)
def test_queries_without_a_time_have_no_window(query: str) -> None:
    assert time_windows(query, NOW) == []


def test_window_overlaps_an_event_range() -> None:
    july = Window(date(2023, 7, 1), date(2023, 7, 31))
    inside = datetime(2023, 7, 14, 23, 0, tzinfo=UTC)
    before = datetime(2023, 6, 30, 12, 0, tzinfo=UTC)
    assert july.overlaps(inside, inside)
    assert not july.overlaps(before, before)
    assert july.overlaps(before, inside)  # a range that runs into the window
    assert not july.overlaps(None, None)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Caroline paint in July 2023?", {"caroline"}),
        ("When did Jon\u2019s store open?", {"jon"}),
        ("What did Gina and Jon talk about?", {"gina", "jon"}),
        ("Which book did James lend to Maria?", {"james", "maria"}),
        ("What did I do on Monday in May?", set()),
        ("What is my favourite colour?", set()),
        ("Caroline said what?", set()),  # the first word is capitalised anyway
    ],
)
def test_names_are_the_capitalised_words_past_the_first(query: str, expected: set[str]) -> None:
    assert names(query) == expected


def test_understand_reads_both() -> None:
    intent = understand("What did Melanie paint in July 2023?", NOW)
    assert intent.names == {"melanie"}
    assert intent.windows == (Window(date(2023, 7, 1), date(2023, 7, 31)),)
    assert not intent.empty
    assert understand("what did i paint", NOW).empty
