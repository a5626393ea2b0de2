"""Section 2: pipeline throughput and add->committed lag, for 1, 10 and 200 scopes.

For each scope count a fresh server (bench.serve_proc, embedded Postgres) receives a burst
of conversation adds over HTTP; every add goes extract (LLM) -> transform_with_context (LLM
once the scope has related memories) -> commit, against the fake LLM answering after 200 ms.
Throughput = runs / (last commit - first add); lag = commit time - add time of each run,
both read from the runs table (server clock), so polling adds no error.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import psycopg

from bench.common import Table, ms, pct, sentence
from bench.loadgen import HttpPool
from bench.services import LLMProc, Server, conversation_add, mnemo_server, postgres_url

SECTION = "2 pipeline"
_STATUS = """
    SELECT count(*) FILTER (WHERE status IN ('completed', 'failed')),
           count(*) FILTER (WHERE status = 'failed'), count(*)
    FROM runs
"""
_TIMES = """
    SELECT extract(epoch FROM created_at), extract(epoch FROM updated_at) FROM runs
    WHERE status = 'completed'
"""


async def burst(server: Server, scopes: int, runs: int) -> None:
    """Send `runs` adds round-robin over `scopes` users, as fast as the server takes them."""
    pool = HttpPool("127.0.0.1", server.port, {"Authorization": f"Bearer {server.key}"}, 64)
    rng = random.Random(scopes)

    async def one(i: int) -> None:
        body = conversation_add(f"scope-{i % scopes}", sentence(rng, i))
        status, payload = await pool.post("/v1/memories", body)
        if status >= 300:
            raise RuntimeError(f"add refused: {status} {payload[:200]!r}")

    await asyncio.gather(*(one(i) for i in range(runs)))
    await pool.close()


def drain(url: str, total: int, timeout: float) -> tuple[list[tuple[float, float]], int]:
    """Wait until every run is terminal; returns (added, committed) times and failures."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            done, failed, count = conn.execute(_STATUS).fetchone() or (0, 0, 0)
            if (count >= total and done >= count) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        rows = conn.execute(_TIMES).fetchall()
    return [(float(c), float(u)) for c, u in rows], int(failed)


def measure(server: Server, scopes: int, runs: int) -> dict[str, float]:
    asyncio.run(burst(server, scopes, runs))
    handle, url = postgres_url(server.data_dir)
    try:
        rows, failed = drain(url, runs, timeout=max(120.0, runs / 5))
    finally:
        handle.cleanup()  # lets go; the server process stops Postgres when it exits
    lags = [committed - added for added, committed in rows]
    first = min((added for added, _ in rows), default=0.0)
    last = max((committed for _, committed in rows), default=0.0)
    return {
        "runs": len(lags),
        "failed": failed,
        "rate": len(lags) / (last - first) if last > first else 0.0,
        "p50": pct(lags, 50),
        "p95": pct(lags, 95),
    }


def run(table: Table, work: Path, llm: LLMProc, quick: bool, workers: int) -> None:
    plan = [(1, 15 if quick else 40), (10, 80 if quick else 300), (200, 500 if quick else 1500)]
    table.add(SECTION, "setup", f"MNEMO_WORKERS={workers}, fake LLM 200 ms/call, burst of adds")
    for scopes, runs in plan:
        before = llm.stats()
        with mnemo_server(work, f"pipeline-{scopes}", llm, workers) as server:
            result = measure(server, scopes, runs)
        calls = sum(llm.stats().values()) - sum(before.values())
        target = "target >= 100 runs/s" if scopes == 200 else ""
        table.add(
            SECTION,
            f"{scopes} scope(s), {runs} runs: runs/s",
            f"{result['rate']:.1f} runs/s ({result['failed']} failed)",
            target,
        )
        table.add(
            SECTION,
            f"{scopes} scope(s): add->committed p50 / p95",
            f"{ms(result['p50'])} / {ms(result['p95'])}",
            f"{calls / max(1, runs):.2f} LLM calls/run",
        )
