"""Running a partition's records of different scope keys at once, each key strictly in order.

A stage reads its partitions in offset order and hands every record to `Lanes.submit`. The
record waits for the previous record of its key (its lane), then for one of `running` slots,
then runs. Reading stops while `taken` records are unfinished, so a hot key cannot make the
stage read without bound, and a slot is only held by a record that runs, so one busy key
does not block the others behind it. A record without a key (the buffer's tick) is a barrier
for its partition: it runs after every record of the partition taken before it, and the
records taken after it wait for it. Acknowledgements go through `OrderedAcks`: a record is
acknowledged only once every record before it on its partition is done.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field

from mnemo.kafka.acks import OrderedAcks

log = logging.getLogger(__name__)

Ack = Callable[[], object]


@dataclass
class _Partition:
    inflight: set[asyncio.Task[None]] = field(default_factory=set)
    barrier: asyncio.Task[None] | None = None


class Lanes:
    def __init__(self, running: int, taken: int) -> None:
        if running < 1 or taken < running:
            raise ValueError("need 1 <= running <= taken")
        self._running = asyncio.Semaphore(running)
        self._taken = asyncio.Semaphore(taken)
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._partitions: dict[Hashable, _Partition] = {}
        self._acks: OrderedAcks[Ack] = OrderedAcks()

    async def submit(
        self,
        tp: Hashable,
        offset: int,
        key: str | None,
        run: Callable[[], Awaitable[None]],
        ack: Ack,
        partition: Hashable | None = None,
    ) -> None:
        """Start the record (returns once it is taken, not when it is done). `partition`
        groups the topics a barrier covers (co-partitioned topics share it; default `tp`)."""
        await self._taken.acquire()
        self._acks.take(tp, offset, ack)
        part = self._partitions.setdefault(tp if partition is None else partition, _Partition())
        before = [t for t in (part.barrier, self._tails.get(key) if key else None) if t]
        if key is None:
            before = [*part.inflight, *before]
        task = asyncio.create_task(self._run(before, run))
        part.inflight.add(task)
        if key is None:
            part.barrier = task
        else:
            self._tails[key] = task
        task.add_done_callback(lambda t: self._finished(t, tp, offset, key, part))

    async def _run(
        self, before: list[asyncio.Task[None]], run: Callable[[], Awaitable[None]]
    ) -> None:
        if before:
            await asyncio.wait(before)
            if any(t.cancelled() for t in before):  # never run ahead of an unfinished record
                raise asyncio.CancelledError
        async with self._running:
            await run()

    def _finished(
        self, task: asyncio.Task[None], tp: Hashable, offset: int, key: str | None, part: _Partition
    ) -> None:
        self._taken.release()
        part.inflight.discard(task)
        if part.barrier is task:
            part.barrier = None
        if key is not None and self._tails.get(key) is task:
            del self._tails[key]
        if task.cancelled():
            return  # not acknowledged: it is delivered again
        if task.exception() is not None:
            log.error("record at %s@%d escaped its handler", tp, offset, exc_info=task.exception())
            return  # held: the partition's commit stays below it until a restart
        for ack in self._acks.done(tp, offset):
            ack()

    @property
    def pending(self) -> int:
        """Records taken and not yet acknowledged."""
        return len(self._acks)

    async def close(self) -> None:
        """Cancel every record still running (they are not acknowledged)."""
        tasks = {t for p in self._partitions.values() for t in p.inflight}
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
