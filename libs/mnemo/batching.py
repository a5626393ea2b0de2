"""Coalesce concurrent requests into one call: embeddings into one model call, adds into one
transaction (group commit).

Under load many coroutines each ask for a little at once (a vector or two; one durable
add). Serving them one call at a time pays the fixed cost of a call (model invocation,
transaction commit and fsync) per request; serving whatever is waiting as one call costs
little more than one request.

`MicroBatcher` needs no timer, so an idle system adds no latency: while one call runs, new
requests queue up and form the next call. A drain task exists only while there is work, so
nothing lingers after the event loop's last request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class MicroBatcher(Generic[T, R]):
    """`await run(items)` returns `encode`'s results for `items`, in order.

    Contract for `encode`: one result per item, in order. Items waiting at the same time are
    passed to it together, at most `max_batch` per call, one call at a time. An exception
    from `encode` fails exactly the requests of that call.
    """

    def __init__(self, encode: Callable[[list[T]], Awaitable[list[R]]], max_batch: int) -> None:
        self._encode = encode
        self._max_batch = max(1, max_batch)
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._drainer: asyncio.Task[None] | None = None

    async def run(self, items: Sequence[T]) -> list[R]:
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[R]] = []
        for item in items:
            future: asyncio.Future[R] = loop.create_future()
            self._pending.append((item, future))
            futures.append(future)
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain(), name="mnemo-micro-batcher")
        return list(await asyncio.gather(*futures))

    async def _drain(self) -> None:
        while self._pending:
            taken = self._pending[: self._max_batch]
            del self._pending[: len(taken)]
            live = [(item, future) for item, future in taken if not future.done()]
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
