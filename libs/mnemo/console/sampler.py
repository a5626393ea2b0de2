"""The gateway's own metrics sampled every `console_sample_seconds` into an hour-long ring
buffer (`MetricsHistory`), so the health charts show the last hour when first opened."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import FastAPI

from mnemo.api.exposition import exposition
from mnemo.console.metrics_view import MetricsHistory, Snapshot

log = logging.getLogger(__name__)

HOUR_SECONDS = 3600.0


def metrics_history(app: FastAPI) -> MetricsHistory:
    """The process's history (one per app), created on first use."""
    state = app.state
    if getattr(state, "console_metrics", None) is None:
        state.console_metrics = MetricsHistory(min_spacing=1.0, max_age=HOUR_SECONDS)
    history: MetricsHistory = state.console_metrics
    return history


Read = Callable[[], Awaitable[bytes]]


async def _sample_forever(app: FastAPI, every: float, read: Read) -> None:
    while True:
        try:
            metrics_history(app).record(Snapshot.parse((await read()).decode()))
        except Exception as exc:  # a missed sample is a gap in a chart, never a crash
            log.warning("console metrics sample failed: %s", exc)
        await asyncio.sleep(every)


@contextlib.asynccontextmanager
async def sampling(app: FastAPI, every: float, read: Read | None = None) -> AsyncIterator[None]:
    """Sample in the background while the app runs (its lifespan holds this open). `read`:
    the exposition to sample (default: the app's engine's, as /metrics serves it)."""

    async def engine_exposition() -> bytes:
        return await exposition(app.state.engine)

    task = asyncio.create_task(
        _sample_forever(app, every, read or engine_exposition), name="console-metrics-sampler"
    )
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
