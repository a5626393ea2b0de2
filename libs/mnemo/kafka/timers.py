"""Timers and background tasks of the stage services that outlive outages.

faust ends a worker whose timer raises (the service crashes and the process exits 1): the
committer's consolidation timer did so 20 s into a Postgres outage. Every timer body is
wrapped by `guarded`: a failure is logged, the following ticks are skipped for a backoff
that doubles while the failures last (`Backoff`), and the first success resets it. The
records' own work retries in place (`mnemo.kafka.handler`); a skipped tick loses nothing,
the next one does its work.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable

from mnemo.core.backoff import transient_backoff
from mnemo.core.failures import Backoff, describe, is_transient
from mnemo.settings import Settings

log = logging.getLogger(__name__)

Body = Callable[[], Awaitable[object]]


class Guarded:
    """A timer body that never raises (cancellation aside) and backs off while it fails.
    `now` is a monotonic clock (seconds), injectable for tests."""

    def __init__(
        self,
        name: str,
        body: Body,
        initial: float = 1.0,
        cap: float = 30.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.body = body
        self.backoff = Backoff(initial, cap)
        self.now = now
        self.resume_at = float("-inf")
        self.failures = 0

    async def __call__(self) -> None:
        if self.now() < self.resume_at:
            return
        try:
            await self.body()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.failures += 1
            wait = self.backoff.next()
            self.resume_at = self.now() + wait
            kind = "unavailable" if is_transient(exc) else "failed"
            log.warning("%s %s (%s); next try in %g s (%d failure(s) in a row)",
                        self.name, kind, describe(exc, 300), wait, self.failures)  # fmt: skip
            return
        if self.failures:
            log.info("%s works again after %d failure(s)", self.name, self.failures)
        self.failures = 0
        self.backoff.reset()
        self.resume_at = float("-inf")


def guarded(
    name: str, initial: float = 1.0, cap: float = 30.0
) -> Callable[[Body], Callable[[], Awaitable[None]]]:
    """Decorator form: `@app.timer(s)` over `@guarded("committer: consolidation timer")`.
    The result is a plain coroutine function with the body's name (faust names its timers
    after the function)."""

    def wrap(body: Body) -> Callable[[], Awaitable[None]]:
        guard = Guarded(name, body, initial, cap)

        @functools.wraps(body)
        async def run() -> None:
            await guard()

        run.guard = guard  # type: ignore[attr-defined]
        return run

    return wrap


def transient_waits(settings: Settings) -> tuple[float, float]:
    """The first wait and the cap of the one transient backoff (`core.backoff`), for `guarded`."""
    backoff = transient_backoff(settings)
    return backoff.initial, backoff.cap
