"""Buffering rules both transports apply: when a buffer flushes, what the flushed batch
holds, and how a sliding window slides. Pure functions; the transports keep the state
(embedded: `buffer_items` rows; Kafka: a changelog-backed table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from mnemo.domain.memory import Candidate
from mnemo.domain.pipeline import BufferTriggers
from mnemo.steps.base import Batch


@dataclass(frozen=True)
class Buffered:
    """One buffered item as the triggers see it: when it arrived and its topic (None for a
    run that extracted nothing, which still waits in the buffer)."""

    created_at: datetime
    topic: str | None


@dataclass(frozen=True)
class Held:
    """What one run put into a buffer."""

    run_id: str
    added_at: datetime
    user_id: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    candidates: Sequence[Candidate] = ()


def items_of(held: Sequence[Held]) -> list[Buffered]:
    """The trigger items of buffered runs: one per candidate, one per empty run."""
    return [Buffered(h.added_at, c.topic) for h in held for c in h.candidates] + [
        Buffered(h.added_at, None) for h in held if not h.candidates
    ]


@dataclass(frozen=True)
class Waiting:
    """What the triggers read of a set of waiting items: how many, the first and last
    arrival, and their topics. Consolidation keeps this per scope instead of the items."""

    count: int
    first: datetime
    last: datetime
    topics: frozenset[str | None] = frozenset()


def flush_reason(triggers: BufferTriggers, items: Sequence[Buffered], now: datetime) -> str | None:
    """The first trigger that fires for these items at `now`, or None to keep waiting."""
    if not items:
        return None
    waiting = Waiting(
        count=len(items),
        first=min(i.created_at for i in items),
        last=max(i.created_at for i in items),
        topics=frozenset(i.topic for i in items),
    )
    return due_reason(triggers, waiting, now)


def due_reason(triggers: BufferTriggers, waiting: Waiting, now: datetime) -> str | None:
    """The first trigger that fires for `waiting` at `now`, or None."""
    if waiting.count <= 0:
        return None
    if triggers.count is not None and waiting.count >= triggers.count:
        return "count"
    if triggers.topics_present and set(triggers.topics_present) <= waiting.topics:
        return "topics_present"
    if (
        triggers.since_first_seconds is not None
        and (now - waiting.first).total_seconds() >= triggers.since_first_seconds
    ):
        return "since_first"
    if (
        triggers.idle_seconds is not None
        and (now - waiting.last).total_seconds() >= triggers.idle_seconds
    ):
        return "idle"
    if triggers.every_seconds is not None:
        every = triggers.every_seconds
        if int(now.timestamp() // every) > int(waiting.first.timestamp() // every):
            return "interval"
    return None


def flush_batch(
    batch_id: str, project: str, group: str, scope_key: str, held: Sequence[Held]
) -> Batch:
    """The batch a flush hands to the next step: every held candidate in arrival order, its
    runs once each in the order they arrived, the scope of the first run."""
    first = held[0]
    return Batch(
        batch_id=batch_id,
        project=project,
        group=group,
        scope_key=scope_key,
        run_ids=list(dict.fromkeys(h.run_id for h in held)),
        user_id=first.user_id,
        properties=dict(first.properties),
        candidates=[c for h in held for c in h.candidates],
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
