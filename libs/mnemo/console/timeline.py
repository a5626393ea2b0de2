"""A user's memory on event time: one lane per memory, a dot per version (placed at the
latest evidence it rests on), supersession arrows between a memory's versions, and dashed
links from the episodes a consolidated rule was made from to that rule."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from markupsafe import Markup, escape
from starlette.responses import Response

from mnemo.api.deps import EngineDep
from mnemo.console.errors import ConsoleRoute
from mnemo.console.forms import blank_to_none
from mnemo.console.rendering import render
from mnemo.console.session import SessionDep
from mnemo.domain.grants import user_for
from mnemo.domain.provenance import Provenance, VersionProvenance
from mnemo.domain.requests import NotFound

MAX_MEMORIES = 40
WIDTH, LABEL_W, LANE_H, TOP, AXIS_H, RIGHT = 1100, 330, 24, 14, 30, 44
LABEL_CHARS = 36


@dataclass(frozen=True)
class Dot:
    at: datetime
    version: VersionProvenance


@dataclass(frozen=True)
class Lane:
    memory_id: str
    topic: str
    status: str  # active, archived or consolidated
    dots: list[Dot]

    @property
    def is_rule(self) -> bool:
        return any(d.version.sources for d in self.dots)


def _when(v: VersionProvenance) -> datetime:
    return v.event_time_end or v.event_time or v.valid_from


def _lane(memory_id: str, topic: str, found: Provenance) -> Lane:
    dots = [Dot(_when(v), v) for v in found.versions]
    return Lane(memory_id, topic, found.status.value, dots)


async def user_lanes(
    engine: EngineDep, project: str, group: str, user_id: str | None
) -> tuple[list[Lane], int]:
    """The newest MAX_MEMORIES memories of the user in `group`, plus the episodes their
    rules hold, oldest first; and how many memories the user has in all."""
    memories, total = await engine.browse_memories(
        project, group, user_id=user_id, limit=MAX_MEMORIES
    )
    config = (await engine.group(project, group)).consolidation
    # A consolidated episode is out of reads by id; its topic is the consolidation's.
    episode_topic = config.episode_topics[0] if config and len(config.episode_topics) == 1 else ""
    lanes: dict[str, Lane] = {}
    for m in memories:
        found = await engine.memory_provenance(project, group, user_id, m.id)
        lanes[m.id] = _lane(m.id, m.topic, found)
    for lane in list(lanes.values()):
        for source in (s for d in lane.dots for s in d.version.sources):
            if source in lanes:
                continue
            try:
                found = await engine.memory_provenance(project, group, user_id, source)
            except NotFound:
                continue
            episode = episode_topic or await _topic(engine, project, group, user_id, source)
            lanes[source] = _lane(source, episode, found)
    ordered = sorted(
        lanes.values(), key=lambda lane: (min(d.at for d in lane.dots), lane.memory_id)
    )
    return ordered, total


async def _topic(
    engine: EngineDep, project: str, group: str, user_id: str | None, memory_id: str
) -> str:
    try:
        return (await engine.get_memory(project, group, user_id, memory_id)).topic
    except NotFound:
        return "episode"


def _ticks(start: datetime, end: datetime, count: int = 6) -> list[datetime]:
    step = (end - start) / count
    return [start + step * i for i in range(count + 1)]


def _label(at: datetime, span: timedelta) -> str:
    if span > timedelta(days=2):
        return f"{at:%Y-%m-%d}"
    return f"{at:%m-%d %H:%M}" if span > timedelta(hours=2) else f"{at:%H:%M:%S}"


def timeline_svg(lanes: list[Lane], group: str, user_id: str | None) -> Markup:
    """The lanes as one SVG (see the module's docstring); links open each memory's page."""
    times = [d.at for lane in lanes for d in lane.dots]
    start, end = min(times), max(times)
    pad = max((end - start) * 0.04, timedelta(minutes=1))
    start, end = start - pad, end + pad
    span = end - start
    plot_w = WIDTH - LABEL_W - RIGHT
    height = TOP + LANE_H * len(lanes) + AXIS_H

    def x(at: datetime) -> float:
        return LABEL_W + plot_w * (at - start) / span

    def y(i: int) -> float:
        return TOP + LANE_H * i + LANE_H / 2

    query = f"?group={quote(group)}" + (f"&amp;user={quote(user_id)}" if user_id else "")
    row = {lane.memory_id: i for i, lane in enumerate(lanes)}
    parts = [
        f'<svg class="timeline" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="Memories of {escape(user_id or "shared scope")} on event time">'
        '<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" class="arrowhead"/></marker>'
        "</defs>"
    ]
    for tick in _ticks(start, end):
        parts.append(
            f'<line class="grid" x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{TOP}" '
            f'y2="{height - AXIS_H + 4}"/><text class="tick" x="{x(tick):.1f}" '
            f'y="{height - 10}" text-anchor="middle">{_label(tick, span)}</text>'
        )
    for i, lane in enumerate(lanes):
        parts.append(_lane_svg(lane, x, y(i), query))
    for i, lane in enumerate(lanes):
        for dot in lane.dots:
            for source in dot.version.sources:
                if source not in row:
                    continue
                src = lanes[row[source]].dots[-1]
                x1, y1, x2, y2 = x(src.at), y(row[source]), x(dot.at), y(i)
                parts.append(
                    f'<path class="consolidation-link" d="M{x1:.1f},{y1:.1f} C{x2:.1f},{y1:.1f} '
                    f'{x1:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"/>'
                )
    parts.append("</svg>")
    return Markup("".join(parts))


def _lane_svg(lane: Lane, x: Callable[[datetime], float], mid: float, query: str) -> str:
    latest = lane.dots[-1].version.content
    room = max(8, LABEL_CHARS - len(lane.topic))
    text = latest if len(latest) <= room else latest[: room - 1] + "…"
    kind = "rule" if lane.is_rule else lane.status
    out = [
        f'<g class="lane lane-{kind}" data-memory="{escape(lane.memory_id)}">'
        f'<a href="/console/memories/{escape(lane.memory_id)}{query}">'
        f'<text class="lane-label" x="{LABEL_W - 8}" y="{mid + 4:.1f}" text-anchor="end">'
        f'<tspan class="lane-topic">{escape(lane.topic)}</tspan> {escape(text)}</text></a>'
    ]
    if len(lane.dots) > 1:
        for a, b in itertools.pairwise(lane.dots):
            out.append(
                f'<line class="supersession" x1="{x(a.at):.1f}" y1="{mid:.1f}" '
                f'x2="{max(x(b.at) - 5, x(a.at)):.1f}" y2="{mid:.1f}" marker-end="url(#arrow)"/>'
            )
    for n, dot in enumerate(lane.dots):
        v = dot.version
        state = "current" if n == len(lane.dots) - 1 and v.operation != "deleted" else "superseded"
        if v.operation == "deleted":
            state = "deleted"
        title = f"v{v.version} {v.operation} · {dot.at:%Y-%m-%d %H:%M} UTC · {v.content}"
        shape = (
            f'<rect x="{x(dot.at) - 5:.1f}" y="{mid - 5:.1f}" width="10" height="10" '
            f'transform="rotate(45 {x(dot.at):.1f} {mid:.1f})"'
            if v.sources
            else f'<circle cx="{x(dot.at):.1f}" cy="{mid:.1f}" r="5"'
        )
        out.append(
            f'{shape} class="version {state}" data-version="{v.version}">'
            f"<title>{escape(title)}</title></{'rect' if v.sources else 'circle'}>"
        )
    out.append("</g>")
    return "".join(out)


router = APIRouter(route_class=ConsoleRoute)


@router.get("/timeline")
async def timeline_page(
    request: Request,
    session: SessionDep,
    engine: EngineDep,
    group: Annotated[str, Query(max_length=64)] = "default",
    user: Annotated[str | None, Query(max_length=256)] = None,
) -> Response:
    user = user_for(session.access, blank_to_none(user))
    groups = await engine.list_groups(session.project)
    lanes: list[Lane] = []
    total = 0
    if user is not None or not (await engine.group(session.project, group)).needs_user:
        lanes, total = await user_lanes(engine, session.project, group, user)
    context = {
        "groups": groups,
        "group_name": group,
        "user": user,
        "lanes": lanes,
        "total": total,
        "svg": timeline_svg(lanes, group, user) if lanes else None,
        "max_memories": MAX_MEMORIES,
    }
    return render(request, "timeline.html", session, context)
