"""The soak's picture: one small line chart per quantity, over the minutes, as plain SVG
(no plotting library is a dependency of mnemo)."""

from __future__ import annotations

from html import escape
from pathlib import Path

COLUMNS = 3
WIDTH, HEIGHT = 300, 130  # one panel
PAD_LEFT, PAD_TOP, PAD_BOTTOM = 48, 22, 22


def _panel(x0: int, y0: int, title: str, minutes: float, values: list[float]) -> str:
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    plot_w, plot_h = WIDTH - PAD_LEFT - 10, HEIGHT - PAD_TOP - PAD_BOTTOM
    step = plot_w / max(1, len(values) - 1)
    points = " ".join(
        f"{x0 + PAD_LEFT + i * step:.1f},{y0 + PAD_TOP + plot_h * (high - v) / (high - low):.1f}"
        for i, v in enumerate(values)
    )
    left, bottom = x0 + PAD_LEFT, y0 + PAD_TOP + plot_h
    return "\n".join([
        f'<text x="{x0 + 6}" y="{y0 + 14}" font-size="12">{escape(title)}</text>',
        f'<rect x="{left}" y="{y0 + PAD_TOP}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="#ccc"/>',
        f'<text x="{left - 4}" y="{y0 + PAD_TOP + 9}" font-size="10" text-anchor="end">'
        f"{high:.4g}</text>",
        f'<text x="{left - 4}" y="{bottom}" font-size="10" text-anchor="end">{low:.4g}</text>',
        f'<text x="{left}" y="{bottom + 14}" font-size="10">0</text>',
        f'<text x="{left + plot_w}" y="{bottom + 14}" font-size="10" text-anchor="end">'
        f"{minutes:.0f} min</text>",
        f'<polyline points="{points}" fill="none" stroke="#1f6feb" stroke-width="1.5"/>',
    ])  # fmt: skip


def write_svg(path: Path, title: str, minutes: float, series: dict[str, list[float]]) -> None:
    """Write one panel per series (name -> values, equally spaced over `minutes`)."""
    named = [(name, values) for name, values in series.items() if values]
    rows = (len(named) + COLUMNS - 1) // COLUMNS
    width, height = COLUMNS * WIDTH, rows * HEIGHT + 30
    panels = [
        _panel((i % COLUMNS) * WIDTH, 30 + (i // COLUMNS) * HEIGHT, name, minutes, values)
        for i, (name, values) in enumerate(named)
    ]
    path.write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>\n'
        f'<text x="6" y="20" font-size="15">{escape(title)}</text>\n'
        + "\n".join(panels)
        + "\n</svg>\n"
    )
