"""Speed per text of the local embedder and of the bench candidates, on this machine.

    python -m bench.embed_speed [local minilm-torch bge-small-int8 ...]

single: one short query-like text per call (median of 60 distinct texts, after warm-up);
batch: 64 memory-like texts per call (best of 3 calls), per text. Same thread budget as the
product (half the cores). Model-level calls: no cache, no micro-batcher.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Any

from bench.common import sentence

SINGLE = 60
BATCH = 64


def encoder(name: str) -> Any:
    if name == "local":
        from mnemo.embeddings.local import load_local_model

        return load_local_model()
    from bench.embedders import BUILDERS

    return BUILDERS[name]()


def measure(name: str) -> tuple[float, float, float]:
    """(load s, single ms/text, batch ms/text)."""
    rng = random.Random(3)
    began = time.perf_counter()
    model = encoder(name)
    load = time.perf_counter() - began
    queries = [f"what did I say about {sentence(rng, None).lower()}?" for _ in range(SINGLE)]
    memories = [sentence(rng, None) + " " + sentence(rng, None) for _ in range(BATCH)]
    model.encode(queries[:2])
    model.encode(memories)
    singles = []
    for text in queries:
        started = time.perf_counter()
        model.encode([text])
        singles.append(time.perf_counter() - started)
    batches = []
    for _ in range(3):
        started = time.perf_counter()
        model.encode(memories)
        batches.append(time.perf_counter() - started)
    return load, statistics.median(singles) * 1000, min(batches) / BATCH * 1000


def main(names: list[str]) -> None:
    print(f"{'embedder':<16}{'load s':>8}{'single ms':>11}{'batch ms/text':>15}")
    for name in names or ["local"]:
        load, single, batch = measure(name)
        print(f"{name:<16}{load:>8.1f}{single:>11.2f}{batch:>15.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
