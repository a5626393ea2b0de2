"""Event time: when what an input tells happened, as its producer dated it.

System times (a run's `created_at`, a memory's `created_at` / `updated_at`) say when mnemo
received or wrote something; event times say when the evidence itself was written (a
message's `created_at`). A backfill of last year's chats has system times of today and event
times of last year.

Rules:
- an input unit's time is its own `created_at` (messages), else its container's
  (`conversation.created_at`, `string.created_at`, `pre_extracted.created_at`), else the
  time the add was admitted with (Engram: "defaults to now"). `dated` fills the containers'
  times at admission, so a run's raw input carries its event times for every retry;
- an input's time (the reference "now" of its relative dates) is its latest unit time;
- a memory's event range (`event_time` .. `event_time_end`) spans the evidence its current
  content rests on; a rewrite extends it (see `Span.union`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from mnemo.domain.inputs import AddInput


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime; a naive one is taken to be UTC (as the Engram SDK sends it)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


# How far ahead of the server's clock an event time may lie (clock skew between a producer
# and the server). A later one would move the scope's event-time watermark into the future,
# and every later add would look idle next to it and flush on its own.
FUTURE_SECONDS = 86_400.0


def located_times(raw: AddInput) -> list[tuple[str, datetime]]:
    """Every event time `raw` carries, with its location in an add's body."""
    found: list[tuple[str, datetime | None]] = []
    if raw.string is not None:
        found.append(("body.input.string.created_at", raw.string.created_at))
    if raw.conversation is not None:
        found.append(("body.input.conversation.created_at", raw.conversation.created_at))
        found += [
            (f"body.input.conversation.messages[{i}].created_at", m.created_at)
            for i, m in enumerate(raw.conversation.messages)
        ]
    if raw.pre_extracted is not None:
        found.append(("body.input.pre_extracted.created_at", raw.pre_extracted.created_at))
    return [(where, t) for where, t in found if t is not None]


def dated(raw: AddInput, default: datetime) -> AddInput:
    """`raw` with `default` as the time of any container that carries none."""
    if raw.string is not None and raw.string.created_at is None:
        return raw.model_copy(
            update={"string": raw.string.model_copy(update={"created_at": default})}
        )
    if raw.conversation is not None and raw.conversation.created_at is None:
        conversation = raw.conversation.model_copy(update={"created_at": default})
        return raw.model_copy(update={"conversation": conversation})
    if raw.pre_extracted is not None and raw.pre_extracted.created_at is None:
        facts = raw.pre_extracted.model_copy(update={"created_at": default})
        return raw.model_copy(update={"pre_extracted": facts})
    return raw


def unit_times(raw: AddInput, default: datetime) -> list[datetime]:
    """The time of each unit of `raw`, in the order of `raw.text_units()`."""
    if raw.string is not None:
        return [as_utc(raw.string.created_at or default)] * len(raw.string.content)
    if raw.conversation is not None:
        fallback = raw.conversation.created_at or default
        return [as_utc(m.created_at or fallback) for m in raw.conversation.messages]
    assert raw.pre_extracted is not None
    return [as_utc(raw.pre_extracted.created_at or default)] * len(raw.pre_extracted.items)


def input_time(raw: AddInput, default: datetime) -> datetime:
    """The input's own "now": its latest unit time."""
    return max(unit_times(raw, default))


@dataclass(frozen=True)
class Span:
    """An event-time range, `start` <= `end` (equal for a single instant)."""

    start: datetime
    end: datetime

    @classmethod
    def of(cls, times: Iterable[datetime | None]) -> Span | None:
        known = [as_utc(t) for t in times if t is not None]
        return cls(min(known), max(known)) if known else None

    @classmethod
    def join(cls, spans: Iterable[Span | None]) -> Span | None:
        """The smallest span covering every given span (None if none is given)."""
        known = [s for s in spans if s is not None]
        if not known:
            return None
        return cls(min(s.start for s in known), max(s.end for s in known))

    def union(self, other: Span | None) -> Span:
        return Span.join((self, other)) or self
