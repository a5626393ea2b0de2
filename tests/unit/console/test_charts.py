from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from mnemo.console.charts import Chart, Series, line_chart, nice_ceiling


@pytest.mark.parametrize(
    ("value", "top"), [(0, 1.0), (0.7, 1.0), (3, 5.0), (7, 10.0), (12, 20.0), (230, 250.0)]
)
def test_the_axis_ends_on_a_round_number_at_or_above_the_largest_value(
    value: float, top: float
) -> None:
    assert nice_ceiling(value) == top


def test_a_chart_places_points_in_time_and_names_empty_series() -> None:
    end = datetime(2026, 12, 7, 3, 0, tzinfo=UTC)
    start = end - timedelta(hours=1)
    early, late = start + timedelta(minutes=10), end - timedelta(minutes=5)
    chart = Chart(
        "Runs per minute",
        "/min",
        [Series("completed", [(early, 2.0), (late, 8.0)], "series-ok"), Series("failed", [])],
    )
    svg = str(line_chart(chart, start, end))
    (points,) = re.findall(r'class="line series-ok" points="([^"]+)"', svg)
    (x1, y1), (x2, y2) = (tuple(map(float, p.split(","))) for p in points.split())
    assert x1 < x2 and y1 > y2  # later is right, more is higher
    assert ">10/min<" in svg  # the axis top for 8
    assert "failed <span class=muted>(none)</span>" in svg
    assert ">02:00<" in svg and ">02:45<" in svg and ">03:00<" in svg


def test_text_is_escaped() -> None:
    now = datetime(2026, 12, 7, tzinfo=UTC)
    svg = str(line_chart(Chart("<b>x</b>", "", [Series("<i>", [(now, 1.0)])]), now, now))
    assert "<b>" not in svg and "<i>" not in svg and "&lt;b&gt;" in svg
