"""Relative dates resolved against the date a sentence was written."""

from __future__ import annotations

from datetime import date

import pytest

from mnemo.llm.offline.dates import resolve_relative_dates

MONDAY = date(2025, 3, 10)


@pytest.mark.parametrize(
    "sentence, resolved",
    [
        ("User went hiking yesterday.", "User went hiking on 2025-03-09."),
        ("Yesterday User went hiking.", "On 2025-03-09 User went hiking."),
        ("User flies to Rome tomorrow.", "User flies to Rome on 2025-03-11."),
        ("User cooks pasta tonight.", "User cooks pasta on 2025-03-10."),
        ("User met Ana the day before yesterday.", "User met Ana on 2025-03-08."),
        ("User moved 3 days ago.", "User moved on 2025-03-07."),
        ("User quit smoking two weeks ago.", "User quit smoking around 2025-02-24."),
        ("User started a job a month ago.", "User started a job in 2025-02."),
        ("User married five years ago.", "User married in 2020."),
        ("User was sick last week.", "User was sick in the week of 2025-03-03."),
        ("User travels next month.", "User travels in 2025-04."),
        ("User turns 40 this year.", "User turns 40 in 2025."),
        ("User ran a race last Saturday.", "User ran a race on 2025-03-08."),
        ("User sees a doctor next Monday.", "User sees a doctor on 2025-03-17."),
        ("User moved to Lisbon last spring.", "User moved to Lisbon in the spring of 2024."),
        ("User skied last winter.", "User skied in the winter of 2024/2025."),
        ("User works from home.", "User works from home."),
        ("User recently moved.", "User recently moved."),
    ],
)
def test_relative_dates(sentence: str, resolved: str) -> None:
    assert resolve_relative_dates(sentence, MONDAY) == resolved


def test_a_season_still_running_is_not_the_last_one() -> None:
    assert resolve_relative_dates("User hiked last summer.", date(2025, 7, 1)) == (
        "User hiked in the summer of 2024."
    )
    assert resolve_relative_dates("User hiked last summer.", date(2025, 9, 1)) == (
        "User hiked in the summer of 2025."
    )
