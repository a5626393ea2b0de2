"""Tiny server-side SVG sparklines (no chart library, no script)."""

from __future__ import annotations

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
