"""Bulk-loading committed memories fast, through the store's own commit path.

Embedding 100k texts with the local model on this machine takes longer than the whole bench
budget (measured and reported by `embed_rate`), so the corpus is `distinct` real sentences
embedded by the model, and every memory is one of them plus a unique suffix, with that
sentence's vector plus a small random perturbation (renormalised; cosine ~0.98 to the
original). Rows go in as the rows `commits.apply` writes, 2000 per executemany, through the
table's triggers (the BM25 postings); section 3 drops the HNSW index during the load and
builds it after.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Sequence

import numpy as np
from sqlalchemy import insert

from bench.common import sentence
from mnemo.core.engine import Engine
from mnemo.store.schema import memories

PROJECT = "default"
USER = "bench-user"
TOPIC = "UserKnowledge"
NOISE = 0.2  # norm of the perturbation added to a unit vector


async def embed_rate(engine: Engine, texts: Sequence[str]) -> tuple[np.ndarray, float]:
    """Embed `texts` in one call; returns the vectors and texts/s."""
    started = time.perf_counter()
    vectors = np.asarray(await engine.deps.embedder.embed(list(texts)), dtype=np.float32)
    return vectors, len(texts) / (time.perf_counter() - started)


def corpus(distinct: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return list(dict.fromkeys(sentence(rng, None) for _ in range(distinct * 4)))[:distinct]


def perturbed(base: np.ndarray, rng: np.random.Generator) -> list[float]:
    noise = rng.standard_normal(base.shape[0]).astype(np.float32)
    vector = base + NOISE * noise / np.linalg.norm(noise)
    return (vector / np.linalg.norm(vector)).tolist()


async def load_bulk(
    engine: Engine, texts: list[str], vectors: np.ndarray, start: int, stop: int
) -> float:
    """Insert the rows commits.apply would write, 2000 per executemany; returns rows/s."""
    rng = np.random.default_rng(start)
    began = time.perf_counter()
    now = engine.deps.clock.now()
    for first in range(start, stop, 2000):
        rows = []
        for i in range(first, min(stop, first + 2000)):
            base = i % len(texts)
            rows.append(
                {
                    "id": str(uuid.uuid4()),
                    "project": PROJECT,
                    "group": "default",
                    "topic": TOPIC,
                    "user_id": USER,
                    "properties": {},
                    "content": f"{texts[base]} (entry {i})",
                    "embedding": perturbed(vectors[base], rng),
                    "status": "active",
                    "version": 1,
                    "run_ids": [f"bulk-{first}"],
                    "created_at": now,
                    "updated_at": now,
                    "event_time": now,
                    "event_time_end": now,
                    "operation": "created",
                }
            )
        async with engine.database.db.begin() as tx:
            await tx.execute(insert(memories), rows)
    return (stop - start) / (time.perf_counter() - began)
