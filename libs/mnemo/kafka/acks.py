"""Acknowledging records that finish out of order, in offset order.

A stage runs records of different scope keys at once, so a partition's records finish in any
order. Kafka keeps one committed offset per partition: everything below it counts as done.
`OrderedAcks` releases a record for acknowledgement only once it and every record before it
on its partition are done, so the committed offset never passes a record still in flight: a
crash re-delivers each unfinished record and skips none. (faust 0.15.3 accepts out-of-order
acks, but its commit of a gap is off by one: with offset N in flight and N+1 acked it commits
N+2. So faust only ever sees acks in offset order, from here.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class OrderedAcks(Generic[T]):
    """Records taken per partition (`tp`: any hashable, e.g. (topic, partition)), in the
    order of their offsets. Not thread-safe: one event loop uses it."""

    def __init__(self) -> None:
        self._pending: dict[Hashable, OrderedDict[int, list[object]]] = {}

    def take(self, tp: Hashable, offset: int, item: T) -> None:
        """A record was read and starts its way; `item` comes back from `done` when it may
        be acknowledged. Offsets arrive in increasing order per partition; a lower one
        (the consumer seeked back after a rebalance) is put in its place."""
        pending = self._pending.setdefault(tp, OrderedDict())
        last = next(reversed(pending), None)
        pending[offset] = [item, False]
        if last is not None and offset < last:
            self._pending[tp] = OrderedDict(sorted(pending.items()))

    def done(self, tp: Hashable, offset: int) -> list[T]:
        """Mark a record done. Returns the records that may be acknowledged now, in offset
        order: the leading records of the partition that are all done."""
        pending = self._pending.get(tp)
        if pending is None or offset not in pending:
            return []
        pending[offset][1] = True
        ready: list[T] = []
        while pending:
            first = next(iter(pending))
            item, finished = pending[first]
            if not finished:
                break
            del pending[first]
            ready.append(item)  # type: ignore[arg-type]
        if not pending:
            del self._pending[tp]
        return ready

    def lowest_pending(self, tp: Hashable) -> int | None:
        """The lowest offset of the partition not yet released (the commit stays below)."""
        pending = self._pending.get(tp)
        return next(iter(pending)) if pending else None

    def __len__(self) -> int:
        return sum(len(p) for p in self._pending.values())
