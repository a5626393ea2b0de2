"""Section 1: add acknowledgement latency over HTTP under open-loop load.

One server (bench.serve_proc: embedded Postgres, default MNEMO_WORKERS, the fake 200 ms LLM)
takes conversation adds for 200 users at each rate in turn. Its pipeline runs meanwhile and
drains the growing backlog, so acknowledgements compete with pipeline work for the 2 cores,
as they would in production.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path

from bench.common import Table, ms, pct, sentence
from bench.loadgen import HttpPool, open_loop
from bench.services import LLMProc, conversation_add, mnemo_server

SECTION = "1 add ack (HTTP)"
USERS = 200


async def measure(url_port: int, key: str, rates: list[int], seconds: float, table: Table) -> None:
    pool = HttpPool("127.0.0.1", url_port, {"Authorization": f"Bearer {key}"}, size=512)
    rng = random.Random(1)
    serial = iter(range(10**9))

    def body(i: int) -> dict[str, object]:
        return conversation_add(f"user-{i % USERS}", sentence(rng, next(serial)))

    await open_loop(pool, "/v1/memories", body, 20, 1.0)  # warm connections and caches
    for rate in rates:
        result = await open_loop(pool, "/v1/memories", body, rate, seconds)
        lat = result.latencies
        note = "target p99 < 10 ms" if rate == 500 else ""
        table.add(
            SECTION,
            f"{rate}/s for {seconds:.0f}s: p50 / p95 / p99",
            f"{ms(pct(lat, 50))} / {ms(pct(lat, 95))} / {ms(pct(lat, 99))}",
            note,
        )
        table.add(
            SECTION,
            f"{rate}/s: achieved rate, errors",
            f"{result.achieved:.0f}/s, {result.errors} errors of {result.sent}"
            + (f" ({_kinds(result.error_kinds)})" if result.errors else "")
            + (f", {result.unsent} unsent (saturated)" if result.unsent else ""),
        )
    await pool.close()


def _kinds(kinds: Counter[str]) -> str:
    return ", ".join(f"{count} {kind}" for kind, count in kinds.most_common(3))


def run(table: Table, work: Path, llm: LLMProc, quick: bool, workers: int) -> None:
    rates = [100, 300, 500]
    seconds = 5.0 if quick else 30.0
    with mnemo_server(work, "add-latency", llm, workers) as server:
        table.add(SECTION, "server", f"MNEMO_WORKERS={workers}, 200 users, conversation adds")
        asyncio.run(measure(server.port, server.key, rates, seconds, table))
