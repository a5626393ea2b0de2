"""One large add beside a small one: does the large add stall other users?

    python -m bench.large_add [--sentences 1500] [--workers 16]

The embedded engine with its product defaults and no LLM (the offline provider, the bundled
bge-small embeddings) on a fresh embedded Postgres. One user adds a single string of
dissimilar sentences (1500 make about 100 KB); once its extraction has started, another
user adds one sentence. Prints how long each took from its add to its completion.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from pathlib import Path

from mnemo.domain.requests import AddRequest
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings

WORDS = (
    "apple river quantum violin mortgage glacier sonnet pixel harbor turbine lantern saffron "
    "cobalt meadow jigsaw falcon ember tundra velvet canyon orbit walnut prism mosaic"
).split()
VERBS = ["like", "keep", "bought", "painted", "collect", "sold", "fixed", "visited"]


def dissimilar_sentences(count: int) -> str:
    rng = random.Random(12)
    return " ".join(
        f"I {rng.choice(VERBS)} the {' '.join(rng.sample(WORDS, 6))} number {i}."
        for i in range(count)
    )


async def run(sentences: int, workers: int, data_dir: Path) -> None:
    engine = await start_engine(Settings(data_dir=data_dir, workers=workers))
    try:
        text = dissimilar_sentences(sentences)
        print(f"large add: {sentences} sentences, {len(text.encode()) / 1000:.0f} KB")
        started = time.perf_counter()
        large = await engine.add(
            "bench",
            AddRequest.model_validate(
                {"user_id": "large", "input": {"string": {"content": [text]}}}
            ),
        )
        await asyncio.sleep(1.0)  # the large run is being extracted by now
        small_started = time.perf_counter()
        small = await engine.add(
            "bench",
            AddRequest.model_validate(
                {"user_id": "small", "input": {"string": {"content": ["I like green tea."]}}}
            ),
        )
        small_done = await engine.wait_run("bench", small.run_id, 900)
        small_seconds = time.perf_counter() - small_started
        large_done = await engine.wait_run("bench", large.run_id, 900)
        large_seconds = time.perf_counter() - started
        print(f"small add of another user: {small_done.status.value} in {small_seconds:.2f} s")
        print(f"large add: {large_done.status.value} in {large_seconds:.1f} s")
        if large_done.error:
            print(f"  error: {large_done.error}")
    finally:
        await engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="mnemo-bench-large-"))
    try:
        asyncio.run(run(args.sentences, args.workers, data_dir))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
