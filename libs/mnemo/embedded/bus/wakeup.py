"""Where idle consumers park until there may be something to claim.

Waking every idle worker on every publish (or letting each poll on its own) makes dozens
of claim queries for one record, and idle polling alone burned most of a core with 64
workers. Instead a producer wakes one parked worker per new record, and a worker that
claimed something wakes one more: a burst fans out to as many workers as it has records,
and an idle pool costs nothing but one slow safety poll.
"""

from __future__ import annotations

import asyncio
from collections import deque


class Wakeup:
    def __init__(self) -> None:
        self._waiters: deque[asyncio.Future[None]] = deque()
        # A wake that found nobody parked is kept (at most one), so a consumer that was
        # between "claimed nothing" and "park" does not sleep through it.
        self._missed = False

    def wake(self, count: int = 1) -> None:
        """Wake up to `count` parked consumers (oldest first)."""
        while count > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                count -= 1
        if count > 0:
            self._missed = True

    def wake_all(self) -> None:
        self.wake(len(self._waiters) + 1)

    async def wait(self, timeout: float | None) -> bool:
        """Park until woken (True) or `timeout` seconds pass (False)."""
        if self._missed:
            self._missed = False
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait((waiter,), timeout=timeout)
            return waiter.done() and not waiter.cancelled()
        finally:
            if not waiter.done():
                waiter.cancel()
            try:
                self._waiters.remove(waiter)
            except ValueError:
                pass
