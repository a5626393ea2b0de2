"""A group's pipeline drawn as an SVG graph on the server: input types on the left, each step
in the column of its longest path from an entry, arrows along the `next` links.

A link that skips columns passes through a waypoint in each column it crosses, so it is
routed beside the steps there instead of through them; each column is ordered by where
its predecessors sit (the barycentre heuristic) to keep lines from crossing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

from markupsafe import Markup, escape

from mnemo.domain.pipeline import BufferStep, Pipeline, Step

NODE_W, NODE_H = 184, 54
PILL_W, PILL_H = 124, 30
LANE_H = 18  # a waypoint's slot
COL_GAP, ROW_GAP, PAD = 64, 20, 12
MAX_LABEL = 22


@dataclass(frozen=True)
class Box:
    key: str  # a step id, "input:<type>" or "via:<from>:<column>"
    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> tuple[float, float]:
        return self.x + self.w, self.y + self.h / 2

    @property
    def left(self) -> tuple[float, float]:
        return self.x, self.y + self.h / 2


def _depths(pipeline: Pipeline) -> dict[str, int]:
    """Column of each step (inputs are column 0): one right of its deepest predecessor."""
    preds: dict[str, list[str]] = {s.id: [] for s in pipeline.steps}
    for step in pipeline.steps:
        if step.next is not None:
            preds[step.next].append(step.id)

    @cache
    def depth(step_id: str) -> int:  # the pipeline is validated acyclic
        return 1 + max((depth(p) for p in preds[step_id]), default=0)

    return {s.id: depth(s.id) for s in pipeline.steps}


def routes(pipeline: Pipeline) -> list[list[str]]:
    """Every arrow as the keys it passes: source, waypoints, target."""
    depth = _depths(pipeline)
    out = []
    links = [(f"input:{s.input_type}", 0, s.id) for s in pipeline.steps if s.input_type]
    links += [(s.id, depth[s.id], s.next) for s in pipeline.steps if s.next]
    for source, start, target in links:
        via = [f"via:{source}:{c}" for c in range(start + 1, depth[target])]
        out.append([source, *via, target])
    return out


def columns(pipeline: Pipeline) -> list[list[str]]:
    """The keys of each column, top to bottom."""
    depth = _depths(pipeline)
    cols: list[list[str]] = [[f"input:{s.input_type}" for s in pipeline.steps if s.input_type]]
    for step in pipeline.steps:
        while len(cols) <= depth[step.id]:
            cols.append([])
        cols[depth[step.id]].append(step.id)
    preds: dict[str, list[str]] = {}
    for route in routes(pipeline):
        for a, b in itertools.pairwise(route):
            preds.setdefault(b, []).append(a)
            if b.startswith("via:"):
                cols[int(b.rsplit(":", 1)[1])].append(b)
    for before, col in itertools.pairwise(cols):
        _order_by_predecessors(col, before, preds)
    return cols


def _order_by_predecessors(col: list[str], before: list[str], preds: dict[str, list[str]]) -> None:
    """Sort `col` by the mean position of each key's predecessors in the column `before`."""
    rank = {key: n for n, key in enumerate(before)}
    order = {key: n for n, key in enumerate(col)}

    def barycentre(key: str) -> tuple[float, int]:
        seen = [rank[p] for p in preds.get(key, []) if p in rank]
        return (sum(seen) / len(seen) if seen else order[key], order[key])

    col.sort(key=barycentre)


def _size(key: str) -> tuple[float, float]:
    if key.startswith("input:"):
        return PILL_W, NODE_H  # the slot of a step, so each input lines up with its entry
    return (0, LANE_H) if key.startswith("via:") else (NODE_W, NODE_H)


def layout(pipeline: Pipeline) -> tuple[dict[str, Box], float, float]:
    cols = columns(pipeline)
    heights = [sum(_size(k)[1] + ROW_GAP for k in col) - ROW_GAP for col in cols]
    height = max(heights) + 2 * PAD
    boxes, x = {}, float(PAD)
    for col, col_height in zip(cols, heights, strict=True):
        width = max(_size(k)[0] for k in col)
        y = (height - col_height) / 2
        for key in col:
            w, h = _size(key)
            w = w or width  # a waypoint spans its column, so its line runs straight through
            boxes[key] = Box(key, x + (width - w) / 2, y, w, h)
            y += h + ROW_GAP
        x += width + COL_GAP
    return boxes, x - COL_GAP + PAD, height


def _edge(route: list[Box]) -> str:
    x, y = route[0].right
    d = f"M{x:.1f},{y:.1f}"
    for box in route[1:]:
        (x2, y2), bend = box.left, (box.left[0] - x) / 2
        d += f" C{x + bend:.1f},{y:.1f} {x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        x, y = box.right
        if box.key.startswith("via:"):
            d += f" L{x:.1f},{y:.1f}"
    return f'<path class="edge" d="{d}" marker-end="url(#arrow)" />'


def _short(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _node(box: Box, step: Step) -> str:
    detail = step.kind.replace("_", " ")
    if isinstance(step, BufferStep):
        detail = f"buffer · {step.mode.replace('_', ' ')}"
    cx = box.x + box.w / 2
    return (
        f'<g class="node node-{step.kind}"><title>{escape(step.id)} ({escape(step.kind)})</title>'
        f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w}" height="{box.h}" rx="8" />'
        f'<text x="{cx:.1f}" y="{box.y + 22:.1f}" class="node-id">{escape(_short(step.id))}</text>'
        f'<text x="{cx:.1f}" y="{box.y + 40:.1f}" class="node-kind">{escape(detail)}</text></g>'
    )


def _pill(box: Box, input_type: str) -> str:
    top = box.y + (box.h - PILL_H) / 2
    return (
        f'<g class="input"><rect x="{box.x:.1f}" y="{top:.1f}" width="{box.w}" '
        f'height="{PILL_H}" rx="{PILL_H / 2}" />'
        f'<text x="{box.x + box.w / 2:.1f}" y="{top + 19:.1f}">{escape(input_type)}</text></g>'
    )


def describe(pipeline: Pipeline) -> str:
    """The graph in words, for screen readers."""
    parts = [f"{s.input_type} input enters at {s.id}" for s in pipeline.steps if s.input_type]
    parts += [f"{s.id} ({s.kind}) then {s.next}" for s in pipeline.steps if s.next]
    parts += [f"{s.id} ends the chain" for s in pipeline.steps if s.next is None]
    return "; ".join(parts) + "."


def pipeline_svg(pipeline: Pipeline, title: str) -> Markup:
    boxes, width, height = layout(pipeline)
    edges = [_edge([boxes[k] for k in route]) for route in routes(pipeline)]
    inputs = [s for s in pipeline.steps if s.input_type]
    nodes = [_pill(boxes[f"input:{s.input_type}"], str(s.input_type)) for s in inputs]
    nodes += [_node(boxes[s.id], s) for s in pipeline.steps]
    return Markup(
        f'<svg class="pipeline" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'role="img" aria-labelledby="pipeline-title pipeline-desc">'
        f'<title id="pipeline-title">{escape(title)}</title>'
        f'<desc id="pipeline-desc">{escape(describe(pipeline))}</desc>'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" /></marker>'
        "</defs>" + "".join(edges) + "".join(nodes) + "</svg>"
    )
