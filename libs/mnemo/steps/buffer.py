"""Buffer triggers: when a scope's buffered items should flush as one batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mnemo.domain.pipeline import BufferTriggers


@dataclass(frozen=True)
class Buffered:
    created_at: datetime
    topic: str | None


def flush_reason(triggers: BufferTriggers, items: Sequence[Buffered], now: datetime) -> str | None:
    """The first trigger that fires for these items at `now`, or None to keep waiting."""
    if not items:
        return None
    if triggers.count is not None and len(items) >= triggers.count:
        return "count"
    if triggers.topics_present and set(triggers.topics_present) <= {i.topic for i in items}:
        return "topics_present"
    first = min(i.created_at for i in items)
    last = max(i.created_at for i in items)
    if (
        triggers.since_first_seconds is not None
        and (now - first).total_seconds() >= triggers.since_first_seconds
    ):
        return "since_first"
    if triggers.idle_seconds is not None and (now - last).total_seconds() >= triggers.idle_seconds:
        return "idle"
    if triggers.every_seconds is not None:
        every = triggers.every_seconds
        if int(now.timestamp() // every) > int(first.timestamp() // every):
            return "interval"
    return None
