"""What recall tracking costs a search: the in-process `record` call on the search path, the
search latency with tracking on and off (alternating), and the background write per search."""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime

from bench.common import pct
from bench.dynamics.runner import Run
from mnemo.core.recall_log import Recall
from mnemo.domain.requests import AddRequest, SearchRequest

PROJECT, GROUP, USER = "dyn-recall-cost", "default", "reader"


async def measure(run: Run, memories: int, searches: int) -> dict[str, float]:
    engine = run.engine
    for start in range(0, memories, 100):
        items = [{"topic": "UserKnowledge", "content": f"Note {i}: the reader liked chapter {i % 37} "
                  f"of book {i // 37} for its {('pace', 'tone', 'plot', 'cast')[i % 4]}."}
                 for i in range(start, min(memories, start + 100))]  # fmt: skip
        added = await engine.add(PROJECT, AddRequest.model_validate(
            {"user_id": USER, "input": {"pre_extracted": {"items": items}}}))  # fmt: skip
        await engine.wait_run(PROJECT, added.run_id, 300)
    on: list[float] = []
    off: list[float] = []
    for i in range(searches):
        tracking = i % 2 == 0
        engine.dynamics.tracking = tracking
        request = SearchRequest.model_validate(
            {"query": f"which chapter of book {i % 50} had the best pace?", "user_id": USER,
             "retrieval_config": {"retrieval_type": "vector", "limit": 10}})  # fmt: skip
        started = time.perf_counter()
        await engine.search(PROJECT, request)
        (on if tracking else off).append(time.perf_counter() - started)
    engine.dynamics.tracking = True
    await engine.dynamics.recalls.flush()
    return {**_record_cost(run), **await _write_cost(run),
            "search_on_p50": pct(on, 50), "search_off_p50": pct(off, 50),
            "search_on_mean": statistics.fmean(on), "search_off_mean": statistics.fmean(off)}  # fmt: skip


def _record_cost(run: Run, calls: int = 20_000) -> dict[str, float]:
    log = run.engine.dynamics.recalls
    ids = [f"memory-{i:04d}-0000-0000-0000-000000000000" for i in range(10)]
    at = datetime.now(UTC)
    samples = []
    for _ in range(calls):
        recall = Recall(PROJECT, GROUP, USER, {"desk_id": "d1"}, ids, at)
        started = time.perf_counter()
        log.record(recall)
        samples.append(time.perf_counter() - started)
        if log.waiting > 5000:
            log._queue.clear()  # keep the measurement about `record`, not the database
            log._waiting.clear()
    log._queue.clear()
    log._waiting.clear()
    return {"record_p50": pct(samples, 50), "record_p99": pct(samples, 99)}


async def _write_cost(run: Run, batch: int = 500) -> dict[str, float]:
    log = run.engine.dynamics.recalls
    ids = [f"memory-{i:04d}" for i in range(10)]
    at = datetime.now(UTC)
    for _ in range(batch):
        log._queue.append(Recall(PROJECT, GROUP, USER, {}, ids, at))
    started = time.perf_counter()
    await log.flush()
    return {"write_per_search": (time.perf_counter() - started) / batch}
