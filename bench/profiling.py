"""Section 5: where the time goes — pyinstrument over the embedded pipeline under load.

An in-process Engine (embedded Postgres, MNEMO_WORKERS workers, the fake 200 ms LLM over
HTTP) takes a burst of conversation adds over 200 scopes; pyinstrument samples the event
loop thread while the workers drain it. The local model runs in a worker thread that
pyinstrument does not sample, so the embedder is wrapped with a wall-clock timer instead.
The full report is written to bench/results/profile.txt (and .html).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, Table, sentence
from bench.services import LLMProc, conversation_add, prepare_postgres
from mnemo.domain.requests import AddRequest
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings

SECTION = "5 profile"


class TimedEmbedder:
    """Wraps an embedder and adds up the wall time of its calls."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.dim, self.label = inner, inner.dim, inner.label
        self.seconds, self.calls, self.texts = 0.0, 0, 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._timed(self.inner.embed, texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._timed(self.inner.embed_query, texts)

    async def _timed(self, call: Any, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            vectors: list[list[float]] = await call(texts)
            return vectors
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1
            self.texts += len(texts)

    async def warm_up(self) -> None:
        await self.inner.warm_up()


WRAPPERS = {"_loop", "run_once", "handle", "execute", "_step", "run_step", "<listcomp>"}


def mnemo_costs(profiler: Any, top: int) -> list[tuple[str, float]]:
    """Inclusive time of mnemo's own functions (wrappers left out), heaviest first."""
    totals: dict[str, float] = {}
    stack = [profiler.last_session.root_frame()]
    while stack:
        frame = stack.pop()
        stack.extend(frame.children)
        path = frame.file_path or ""
        if "mnemo/" not in path or "bench/" in path or frame.function in WRAPPERS:
            continue
        key = f"{Path(path).parent.name}/{Path(path).name}:{frame.function}"
        totals[key] = totals.get(key, 0.0) + frame.time
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:top]


async def profiled_burst(work: Path, llm: LLMProc, runs: int, workers: int) -> dict[str, Any]:
    from pyinstrument import Profiler

    from mnemo.embeddings.local import LocalEmbedder

    data_dir = work / "data" / "profile"
    prepare_postgres(data_dir, 400)
    settings = Settings(
        data_dir=data_dir, llm_base_url=llm.url, llm_api_key="bench", workers=workers
    )
    embedder = TimedEmbedder(LocalEmbedder())
    engine = await start_engine(settings, embedder=embedder, run_workers=False)  # type: ignore[arg-type]
    try:
        rng = random.Random(5)
        requests = [
            AddRequest.model_validate(conversation_add(f"p-{i % 200}", sentence(rng, i)))
            for i in range(runs)
        ]
        profiler = Profiler(interval=0.001, async_mode="disabled")
        profiler.start()
        started = time.perf_counter()
        run_ids = [(await engine.add("default", r)).run_id for r in requests]
        added = time.perf_counter() - started
        await engine.transport.start()
        for run_id in run_ids:
            await engine.wait_run("default", run_id, 600)
        elapsed = time.perf_counter() - started
        profiler.stop()
    finally:
        await engine.close()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "profile.txt").write_text(profiler.output_text(color=False, show_all=False))
    (RESULTS_DIR / "profile.html").write_text(profiler.output_html())
    return {
        "elapsed": elapsed,
        "added": added,
        "embed": embedder,
        "top": mnemo_costs(profiler, 10),
        "cpu": profiler.last_session.cpu_time,
    }


def run(table: Table, work: Path, llm: LLMProc, quick: bool, workers: int) -> None:
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        table.add(SECTION, "skipped", "pyinstrument is not installed (pip install pyinstrument)")
        return
    runs = 300 if quick else 600
    result = asyncio.run(profiled_burst(work, llm, runs, workers))
    elapsed, embed = result["elapsed"], result["embed"]
    table.add(
        SECTION,
        f"{runs} runs, 200 scopes, in-process",
        f"{runs / elapsed:.1f} runs/s; loop thread CPU {result['cpu']:.1f} s of {elapsed:.1f} s",
        f"MNEMO_WORKERS={workers}; adds took {result['added']:.1f} s",
    )
    table.add(
        SECTION,
        "embedder (other thread)",
        f"{embed.seconds:.1f} s wall in {embed.calls} calls, {embed.texts} texts",
        f"{embed.seconds / max(1, embed.texts) * 1000:.1f} ms/text incl. queueing",
    )
    for name, seconds in result["top"]:
        table.add(SECTION, f"loop time in {name}"[:72], f"{seconds:.1f} s", "inclusive")
