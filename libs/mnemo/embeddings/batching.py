"""Coalesce concurrent embedding requests into one model call.

Under load many pipeline workers and searches each ask for one or two vectors at once.
Encoding them one call at a time behind a lock wastes most of the model's time on per-call
overhead; encoding whatever is waiting as one batch costs little more than one text.

`MicroBatcher` needs no timer: while one batch is being encoded, new requests queue up and
form the next batch. A drain task exists only while there is work, so nothing lingers
after the event loop's last request.
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
            self._drainer = loop.create_task(self._drain(), name="mnemo-embed-batcher")
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
