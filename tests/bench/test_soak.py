"""The soak's verdict on growth and its picture (bench.soak, bench.soak_svg)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

from bench.soak import Sample, growth, series
from bench.soak_svg import write_svg


def test_steady_noise_is_not_growth() -> None:
    rng = random.Random(3)
    values = [500 + rng.uniform(-20, 20) for _ in range(180)]
    assert growth(values)[1] is False


def test_a_slow_leak_is_growth() -> None:
    rng = random.Random(3)
    values = [500 + i * 1.5 + rng.uniform(-20, 20) for i in range(180)]
    delta, grew = growth(values)
    assert grew and 150 < delta < 300


def test_warm_up_alone_is_not_growth() -> None:
    # Caches fill in the first minutes, then the level holds.
    values = [100 + min(i, 10) * 30 for i in range(180)]
    assert growth(values)[1] is False


def test_the_picture_has_a_panel_per_quantity(tmp_path: Path) -> None:
    samples = [
        Sample(minute=i / 6, runs_per_s=1.0, p99_s=2.0, backlog=3, connections=10,
               rss_mb={"server": 700.0 + i}, open_files={"server": 90})
        for i in range(30)
    ]  # fmt: skip
    named = series(samples)
    assert set(named) == {"runs/s", "p99 add->commit (s)", "backlog (runs)", "db connections",
                          "memory server (MB, PSS)", "open files server"}  # fmt: skip
    path = tmp_path / "soak.svg"
    write_svg(path, "soak", samples[-1].minute, named)
    root = ET.parse(path).getroot()
    assert len(root.findall("{http://www.w3.org/2000/svg}polyline")) == len(named)
