"""Coalesce concurrent requests into one call: embeddings into one model call, adds into one
transaction (group commit).

Under load many coroutines each ask for a little at once (a vector or two; one durable
add). Serving them one call at a time pays the fixed cost of a call (model invocation,
transaction commit and fsync) per request; serving whatever is waiting as one call costs
little more than one request.

`MicroBatcher` needs no timer, so an idle system adds no latency: while one call runs, new
requests queue up and form the next call. A drain task exists only while there is work, so
nothing lingers after the event loop's last request.

A call takes items from the waiting requests in turn, one each, so a request of a thousand
texts cannot hold back a request of one that arrived after it: the small one rides in the
next call. The queue is bounded: past `max_pending` waiting items a request is refused with
`QueueFull` at once instead of waiting behind an ever longer line.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from mnemo.errors import MnemoError

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_MAX_PENDING = 100_000


class QueueFull(MnemoError, RuntimeError):
    """The batcher's queue holds `max_pending` items already; try again shortly."""

    transient = True


class MicroBatcher(Generic[T, R]):
    """`await run(items)` returns `encode`'s results for `items`, in order.

    Contract for `encode`: one result per item, in order. Items waiting at the same time are
    passed to it together, at most `max_batch` per call, one call at a time, taken from the
    waiting requests in turn. An exception from `encode` fails exactly the requests of that
    call. `run` raises QueueFull when `max_pending` items are already waiting (a request
    alone in the queue is always taken, whatever its size).
    """

    def __init__(
        self,
        encode: Callable[[list[T]], Awaitable[list[R]]],
        max_batch: int,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        self._encode = encode
        self._max_batch = max(1, max_batch)
        self.max_pending = max(1, max_pending)
        # One deque of (item, future) per request with items still waiting.
        self._requests: deque[deque[tuple[T, asyncio.Future[R]]]] = deque()
        self._pending = 0
        self._drainer: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        """Items waiting for a call (not those in the call running now)."""
        return self._pending

    async def run(self, items: Sequence[T]) -> list[R]:
        if self._pending and self._pending + len(items) > self.max_pending:
            raise QueueFull(f"{self._pending} items are already waiting (limit {self.max_pending})")
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[R]] = [loop.create_future() for _ in items]
        if futures:
            self._requests.append(deque(zip(items, futures, strict=True)))
            self._pending += len(futures)
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain(), name="mnemo-micro-batcher")
        return list(await asyncio.gather(*futures))

    def _take(self) -> list[tuple[T, asyncio.Future[R]]]:
        """The next call's items: one from each waiting request in turn, up to max_batch."""
        taken: list[tuple[T, asyncio.Future[R]]] = []
        while self._requests and len(taken) < self._max_batch:
            request = self._requests.popleft()
            taken.append(request.popleft())
            if request:
                self._requests.append(request)
        self._pending -= len(taken)
        return taken

    async def _drain(self) -> None:
        while self._requests:
            live = [(item, future) for item, future in self._take() if not future.done()]
            if not live:
                continue  # every requester gave up (cancelled)
            try:
                results = await self._encode([item for item, _ in live])
                if len(results) != len(live):
                    raise RuntimeError(f"encoder returned {len(results)} results for {len(live)}")
            except Exception as exc:
                for _, future in live:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), result in zip(live, results, strict=True):
                if not future.done():
                    future.set_result(result)
