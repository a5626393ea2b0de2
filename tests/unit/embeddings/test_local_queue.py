"""The local embedder serves a search's query between a long request's memories, not after
them (a fake model stands in for bge-small: this is about the queue, not the vectors)."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from mnemo.embeddings.local import QUERY_INSTRUCTION, LocalEmbedder


class RecordingModel:
    """Encodes in order, a few milliseconds a text, and remembers what it encoded when."""

    def __init__(self) -> None:
        self.order: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        for text in texts:
            time.sleep(0.002)
            self.order.append(text)
        return np.ones((len(texts), 384), dtype=np.float32)


async def test_a_query_does_not_wait_for_a_long_request_to_finish() -> None:
    embedder = LocalEmbedder(cache_size=0)
    model = RecordingModel()
    embedder._model = model  # loaded: the fake instead of the real file
    memories = [f"memory {i}" for i in range(64)]

    async def query() -> None:
        await asyncio.sleep(0.01)  # arrives while the memories are being embedded
        await embedder.embed_query(["where does the user live?"])

    await asyncio.gather(embedder.embed(memories), query())
    position = model.order.index(QUERY_INSTRUCTION + "where does the user live?")
    assert 0 < position < 16, position  # a few memories in, not behind all 64
