from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from mnemo.console.timeline import Dot, Lane, timeline_svg
from mnemo.domain.provenance import VersionProvenance

T0 = datetime(2026, 10, 1, tzinfo=UTC)


def _version(n: int, days: int, content: str, sources: list[str] | None = None) -> Dot:
    at = T0 + timedelta(days=days)
    op = "created" if n == 1 else "updated"
    v = VersionProvenance(
        version=n, operation=op, content=content, valid_from=at, event_time=at,
        event_time_end=at, run_id=f"run-{n}", sources=sources or [],
    )  # fmt: skip
    return Dot(at, v)


def test_versions_supersessions_and_consolidation_links_are_drawn() -> None:
    tea = Lane("m-tea", "Prefs", "active", [_version(1, 0, "coffee"), _version(2, 20, "tea")])
    ep1 = Lane("m-e1", "Episodes", "consolidated", [_version(1, 5, "wolf <tone>")])
    ep2 = Lane("m-e2", "Episodes", "consolidated", [_version(1, 9, "lower cut")])
    rule = Lane("m-rule", "Rules", "active", [_version(1, 30, "rule", ["m-e1", "m-e2"])])
    svg = str(timeline_svg([tea, ep1, ep2, rule], "g", "u & v"))
    tea_lane = svg.split('data-memory="m-tea"', 1)[1].split("</g>", 1)[0]
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', tea_lane)]
    assert xs[0] < xs[1]  # on event time
    assert 'class="version superseded"' in tea_lane and 'class="version current"' in tea_lane
    assert tea_lane.count('class="supersession"') == 1
    assert svg.count('class="consolidation-link"') == 2
    assert 'class="lane lane-rule" data-memory="m-rule"' in svg and "<rect" in svg
    assert "wolf &lt;tone&gt;" in svg and "user=u%20%26%20v" in svg
    assert ">2026-10-" in svg  # a span of weeks: dates on the axis
