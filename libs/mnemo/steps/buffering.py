"""Buffering rules both transports apply: when a buffer flushes, what the flushed batch
holds, and how a sliding window slides. Pure functions; the transports keep the state
(embedded: `buffer_items` and `buffer_watermarks` rows; Kafka: a changelog-backed table).

A buffer follows event time (when the buffered evidence happened) with the wall clock as a
fallback; see `flush_reason` and `flush_before`. An arriving run is handled as:
1. `flush_before`: flush what the buffer holds if the arrival closes it;
2. take the arrival in and `advance` the watermark;
3. `flush_reason`: flush if a trigger fires now.
A tick (the transports' timer) applies step 3 alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from mnemo.domain.batch import Batch
from mnemo.domain.memory import Candidate
from mnemo.domain.pipeline import BufferTriggers


@dataclass(frozen=True)
class Buffered:
    """One buffered item as the triggers see it: the event time of its evidence, when it
    arrived in the buffer (system time), and its topic (None for a run that extracted
    nothing, which still waits in the buffer)."""

    event_time: datetime
    arrived_at: datetime
    topic: str | None


@dataclass(frozen=True)
class Held:
    """What one run put into a buffer. `event_time` is the run's input time: what the run
    counts as when it brought no candidate, and the time of candidates that carry none."""

    run_id: str
    added_at: datetime
    user_id: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    candidates: Sequence[Candidate] = ()
    event_time: datetime | None = None


def items_of(held: Sequence[Held]) -> list[Buffered]:
    """The trigger items of buffered runs: one per candidate (at the end of its evidence),
    one per run that brought none."""
    return [
        Buffered(c.event_time_end or h.event_time or h.added_at, h.added_at, c.topic)
        for h in held
        for c in h.candidates
    ] + [Buffered(h.event_time or h.added_at, h.added_at, None) for h in held if not h.candidates]


def advance(watermark: datetime | None, items: Sequence[Buffered]) -> datetime | None:
    """The scope's event-time watermark once `items` were seen: the latest event time."""
    times = [i.event_time for i in items] + ([watermark] if watermark is not None else [])
    return max(times) if times else None


def flush_reason(
    triggers: BufferTriggers,
    items: Sequence[Buffered],
    now: datetime,
    watermark: datetime | None = None,
) -> str | None:
    """The first trigger that fires for these items, or None to keep waiting.

    `count` and `topics_present` look at the items. Time triggers fire when EITHER clock
    says so:
    - event time: the scope's watermark (the latest event time seen, never earlier than
      the items' own) against the items' event times;
    - wall clock: `now` against the items' arrival times, so a scope that stops receiving
      events still flushes.
    since_first: `since_first_seconds` after the first item; idle: `idle_seconds` after
    the last one; interval: the clock has entered a later `every_seconds` interval
    (aligned to the epoch in UTC) than the first item's.
    """
    if not items:
        return None
    if triggers.count is not None and len(items) >= triggers.count:
        return "count"
    if triggers.topics_present and set(triggers.topics_present) <= {i.topic for i in items}:
        return "topics_present"
    mark = advance(watermark, items)
    assert mark is not None
    first_event, last_event = min(i.event_time for i in items), max(i.event_time for i in items)
    first_seen, last_seen = min(i.arrived_at for i in items), max(i.arrived_at for i in items)
    if triggers.since_first_seconds is not None and (
        _elapsed(first_event, mark) >= triggers.since_first_seconds
        or _elapsed(first_seen, now) >= triggers.since_first_seconds
    ):
        return "since_first"
    if triggers.idle_seconds is not None and (
        _elapsed(last_event, mark) >= triggers.idle_seconds
        or _elapsed(last_seen, now) >= triggers.idle_seconds
    ):
        return "idle"
    every = triggers.every_seconds
    if every is not None and (
        _interval(mark, every) > _interval(first_event, every)
        or _interval(now, every) > _interval(first_seen, every)
    ):
        return "interval"
    return None


def flush_before(
    triggers: BufferTriggers,
    items: Sequence[Buffered],
    watermark: datetime | None,
    arriving: Sequence[Buffered],
    now: datetime,
) -> str | None:
    """Whether what the buffer holds must flush before `arriving` joins it, and why.

    It must when a trigger fires for the held items at the watermark the arrival brings
    (the events in between did not happen, so nothing else would have joined them), or
    when the arrival belongs to another interval than theirs. This is what makes a burst
    of dated history batch exactly as the same events would live, with the clock moving.
    """
    if not items or not arriving:
        return None
    reason = flush_reason(triggers, items, now, advance(watermark, arriving))
    if reason is not None:
        return reason
    every = triggers.every_seconds
    if every is not None:
        first = _interval(min(i.event_time for i in items), every)
        if any(_interval(a.event_time, every) != first for a in arriving):
            return "interval"
    return None


@dataclass(frozen=True)
class Waiting:
    """What the time and count triggers read of waiting items kept as a tally instead of
    the items (consolidation keeps one per scope): how many, the first and last arrival
    (wall clock), and their topics."""

    count: int
    first: datetime
    last: datetime
    topics: frozenset[str | None] = frozenset()


def due_reason(triggers: BufferTriggers, waiting: Waiting, now: datetime) -> str | None:
    """The first trigger that fires for the tally `waiting` at `now` (wall clock), or None."""
    if waiting.count <= 0:
        return None
    if triggers.count is not None and waiting.count >= triggers.count:
        return "count"
    if triggers.topics_present and set(triggers.topics_present) <= waiting.topics:
        return "topics_present"
    if (
        triggers.since_first_seconds is not None
        and _elapsed(waiting.first, now) >= triggers.since_first_seconds
    ):
        return "since_first"
    if triggers.idle_seconds is not None and _elapsed(waiting.last, now) >= triggers.idle_seconds:
        return "idle"
    every = triggers.every_seconds
    if every is not None and _interval(now, every) > _interval(waiting.first, every):
        return "interval"
    return None


def _elapsed(since: datetime, until: datetime) -> float:
    return (until - since).total_seconds()


def _interval(at: datetime, every: float) -> int:
    return int(at.timestamp() // every)


def flush_batch(
    batch_id: str, project: str, group: str, scope_key: str, held: Sequence[Held]
) -> Batch:
    """The batch a flush hands to the next step: every held candidate in arrival order, its
    runs once each in the order they arrived, the scope of the first run, and the latest
    input time of its runs."""
    first = held[0]
    times = [h.event_time for h in held if h.event_time is not None]
    return Batch(
        batch_id=batch_id,
        project=project,
        group=group,
        scope_key=scope_key,
        run_ids=list(dict.fromkeys(h.run_id for h in held)),
        user_id=first.user_id,
        properties=dict(first.properties),
        candidates=[c for h in held for c in h.candidates],
        event_time=max(times) if times else None,
    )


@dataclass(frozen=True)
class WindowEntry:
    run_id: str
    units: Sequence[str]


def slide(
    entries: Sequence[WindowEntry], run_id: str, units: Sequence[str], size: int
) -> tuple[list[WindowEntry], list[str]]:
    """A sliding window after `run_id` joins it, and the context it gives that run.

    The window keeps the scope's last `size` inputs; the context is the units of the
    inputs before this one. An entry of the same run (a redelivery) is replaced, not
    doubled."""
    earlier = [e for e in entries if e.run_id != run_id]
    window = [*earlier, WindowEntry(run_id, list(units))][-size:]
    return window, [u for e in earlier for u in e.units]
