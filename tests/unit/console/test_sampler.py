from __future__ import annotations

import asyncio

from fastapi import FastAPI

from mnemo.console.metrics_view import Snapshot
from mnemo.console.sampler import metrics_history, sampling


async def test_the_sampler_records_in_the_background_until_the_app_stops() -> None:
    app = FastAPI()
    reads = 0
    fourth = asyncio.Event()

    async def read() -> bytes:
        nonlocal reads
        reads += 1
        if reads == 4:
            fourth.set()
        if reads == 2:
            raise OSError("scrape failed")  # a gap, not the end of sampling
        return f"# TYPE mnemo_runs_total counter\nmnemo_runs_total {reads}\n".encode()

    history = metrics_history(app)
    async with sampling(app, 1.05, read):  # just above the history's 1 s spacing
        await asyncio.wait_for(fourth.wait(), 60)
    stopped_at = reads
    await asyncio.sleep(1.2)
    assert reads == stopped_at  # stopped with the app
    before_any = Snapshot(0.0, {})
    values = [v for _, v in history.gauge(before_any, ("mnemo_runs_total", ()))]
    assert values[:3] == [1.0, 3.0, 4.0]  # read 2 failed: a gap
