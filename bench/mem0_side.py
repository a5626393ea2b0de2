"""The mem0 half of section 4. Runs INSIDE bench/.venv-mem0 (stdlib + mem0ai only).

Reads a JSON job on stdin, prints one JSON result line on stdout:
  {"llm_url", "pg_uri", "model_path", "history_db", "adds": [[user, text], ...],
   "queries": [[user, text], ...]}
Each user's adds run in order (one at a time), users run concurrently, as mnemo orders a
scope's runs. mem0's add returns once its memories are stored, i.e. searchable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections import defaultdict
from importlib.metadata import version

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def make_memory(job: dict) -> object:
    from mem0 import AsyncMemory
    from mem0.configs.base import MemoryConfig

    config = MemoryConfig(
        vector_store={
            "provider": "pgvector",
            "config": {
                "connection_string": job["pg_uri"],
                "collection_name": "mem0bench",
                "embedding_model_dims": 384,
                "hnsw": True,
                "maxconn": 32,
            },
        },
        llm={
            "provider": "openai",
            "config": {"model": "fake", "api_key": "bench", "openai_base_url": job["llm_url"]},
        },
        embedder={
            "provider": "huggingface",
            "config": {
                "model": job["model_path"],
                "embedding_dims": 384,
                "model_kwargs": {"device": "cpu", "local_files_only": True},
            },
        },
        history_db_path=job["history_db"],
    )
    return AsyncMemory(config)


async def main() -> None:
    job = json.loads(sys.stdin.read())
    import torch

    torch.set_num_threads(1)  # as mnemo's local embedder does on this 2-core machine
    memory = make_memory(job)
    await memory.search("warm up", filters={"user_id": "warm-up"}, top_k=10)
    counted = {"calls": 0, "texts": 0}
    embedder = memory.embedding_model  # type: ignore[attr-defined]
    inner = embedder.embed

    def embed(text: object, *args: object, **kwargs: object) -> object:
        counted["calls"] += 1
        counted["texts"] += len(text) if isinstance(text, list) else 1
        return inner(text, *args, **kwargs)

    embedder.embed = embed  # counts the adds' embedding calls
    per_user: dict[str, list[str]] = defaultdict(list)
    for user, text in job["adds"]:
        per_user[user].append(text)
    errors = 0

    async def scope(user: str, texts: list[str]) -> None:
        nonlocal errors
        for text in texts:
            try:
                await memory.add([{"role": "user", "content": text}], user_id=user)
            except Exception as exc:  # counted and reported, not fatal
                errors += 1
                logging.warning("mem0 add failed: %s", exc)

    started = time.perf_counter()
    await asyncio.gather(*(scope(u, t) for u, t in per_user.items()))
    add_seconds = time.perf_counter() - started
    embed_calls, embed_texts = counted["calls"], counted["texts"]
    latencies, hits = [], 0
    for user, query in job["queries"]:
        began = time.perf_counter()
        found = await memory.search(query, filters={"user_id": user}, top_k=10)
        latencies.append(time.perf_counter() - began)
        hits += bool(found.get("results") if isinstance(found, dict) else found)
    stored = 0
    for user in per_user:
        listed = await memory.get_all(filters={"user_id": user}, top_k=1000)
        stored += len(listed.get("results", []) if isinstance(listed, dict) else listed)
    print(
        json.dumps(
            {
                "version": version("mem0ai"),
                "add_seconds": add_seconds,
                "adds": len(job["adds"]),
                "errors": errors,
                "stored": stored,
                "search_latencies": latencies,
                "search_hits": hits,
                "embed_calls": embed_calls,
                "embed_texts": embed_texts,
                "threads": min(32, (os.cpu_count() or 1) + 4),
            }
        )
    )


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    asyncio.run(main())
