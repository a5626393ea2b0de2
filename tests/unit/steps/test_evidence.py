"""A memory's event time is the time of the units it cites, or of the whole input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mnemo.domain.event_time import Span
from mnemo.steps.extract import evidence_span

T = [datetime(2025, 3, 10, tzinfo=UTC) + timedelta(days=i) for i in range(3)]


def test_cited_units_give_the_range() -> None:
    assert evidence_span(T, [1]) == Span(T[1], T[1])
    assert evidence_span(T, [2, 0]) == Span(T[0], T[2])


def test_no_valid_citation_means_the_whole_input() -> None:
    assert evidence_span(T, []) == Span(T[0], T[2])
    assert evidence_span(T, [7, -1]) == Span(T[0], T[2])
