"""Server-side SVG charts (no chart library, no script, nothing fetched): sparklines and
time-series line charts with axes, gridlines and a legend."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from markupsafe import Markup, escape

WIDTH = 180
HEIGHT = 36


def sparkline(values: list[float], label: str) -> Markup:
    """A line of `values` scaled to fit (one value draws a level line; none, a note)."""
    if not values:
        return Markup('<p class="spark-empty muted">collecting samples…</p>')
    if len(values) == 1:
        values = values * 2
    top = max(values) or 1.0
    step = WIDTH / (len(values) - 1)
    points = " ".join(
        f"{i * step:.1f},{HEIGHT - 2 - (v / top) * (HEIGHT - 4):.1f}" for i, v in enumerate(values)
    )
    return Markup(
        f'<svg class="spark" viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="none" '
        f'role="img" aria-label="{escape(label)} trend"><title>{escape(label)}</title>'
        f'<polyline points="{points}" /></svg>'
    )


@dataclass(frozen=True)
class Series:
    """One line: (time, value) points, oldest first. `css` picks its colour (series-N)."""

    label: str
    points: Sequence[tuple[datetime, float]]
    css: str = "series-0"


@dataclass(frozen=True)
class Chart:
    title: str
    unit: str  # shown on the y axis, e.g. "/min" or "s"
    series: list[Series] = field(default_factory=list)


CHART_W, CHART_H = 520, 170
LEFT, RIGHT, TOP, BOTTOM = 48, 10, 10, 22


def nice_ceiling(value: float) -> float:
    """The top of the y axis: 1, 2, 2.5 or 5 times a power of ten at or above `value`."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def _number(value: float) -> str:
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.2g}"


def line_chart(chart: Chart, start: datetime, end: datetime) -> Markup:
    """`chart` between `start` and `end` (UTC): a time axis every 15 minutes (or fewer for a
    short span), three gridlines, a legend; a series without points is named as empty."""
    inner_w, inner_h = CHART_W - LEFT - RIGHT, CHART_H - TOP - BOTTOM
    span = max((end - start).total_seconds(), 1.0)
    values = [v for s in chart.series for _, v in s.points]
    top = nice_ceiling(max(values, default=0.0))

    def x(at: datetime) -> float:
        return LEFT + inner_w * min(max((at - start).total_seconds() / span, 0.0), 1.0)

    def y(value: float) -> float:
        return TOP + inner_h * (1 - value / top)

    parts = [
        f'<svg class="chart" viewBox="0 0 {CHART_W} {CHART_H}" role="img" '
        f'aria-label="{escape(chart.title)}"><title>{escape(chart.title)}</title>'
    ]
    for i in range(4):
        level = top * i / 3
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{CHART_W - RIGHT}" y1="{y(level):.1f}" '
            f'y2="{y(level):.1f}"/><text class="tick" x="{LEFT - 4}" y="{y(level) + 3:.1f}" '
            f'text-anchor="end">{_number(level)}{escape(chart.unit) if i == 3 else ""}</text>'
        )
    tick = timedelta(minutes=15 if span > 1800 else 5)
    first = start.astimezone(UTC).replace(second=0, microsecond=0)
    first += timedelta(minutes=-first.minute % int(tick.total_seconds() // 60))
    at = first
    while at <= end:
        parts.append(
            f'<text class="tick" x="{x(at):.1f}" y="{CHART_H - 6}" text-anchor="middle">'
            f"{at:%H:%M}</text>"
        )
        at += tick
    for s in chart.series:
        if not s.points:
            continue
        coords = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in s.points)
        parts.append(
            f'<polyline class="line {s.css}" points="{coords}"><title>{escape(s.label)}</title>'
            "</polyline>"
        )
        if len(s.points) == 1:
            ((t, v),) = s.points
            parts.append(f'<circle class="dot {s.css}" cx="{x(t):.1f}" cy="{y(v):.1f}" r="2.5"/>')
    parts.append("</svg>")
    legend = "".join(
        f'<li class="{s.css}"><span class="swatch"></span>{escape(s.label)}'
        f"{'' if s.points else ' <span class=muted>(none)</span>'}</li>"
        for s in chart.series
    )
    return Markup(
        f'<figure class="chart-figure"><figcaption>{escape(chart.title)}</figcaption>'
        f'{"".join(parts)}<ul class="legend">{legend}</ul></figure>'
    )
