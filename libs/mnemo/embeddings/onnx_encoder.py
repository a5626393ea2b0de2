"""A BERT sentence encoder exported to ONNX, run on onnxruntime: texts in, unit vectors out.

The model file returns the token states (`last_hidden_state`); the sentence vector is the
first token's ([CLS]) state, L2-normalised, which is how bge models are pooled. Texts are
tokenized with the model's own `tokenizer.json` and truncated to `max_tokens`.

Each text is run alone. The int8 model quantizes its activations dynamically, with one
scale over the whole input tensor, so in a batch a text's vector depends on its neighbours
and on their padding (cosine down to 0.99 to its vector alone). Alone, a text always gets
the same vector: the cache, duplicate detection and `mnemo reembed`'s checks rely on that.
Batched inference would be about a third faster per text (bench.embed_speed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


class OnnxSentenceEncoder:
    """CLS-pooled, unit-length float32 vectors. Not thread-safe: one `encode` at a time."""

    def __init__(
        self, model: Path, tokenizer: Path, *, max_tokens: int, threads: int | None = None
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        # Leave half the cores to the event loop, Postgres and the HTTP server.
        options.intra_op_num_threads = threads or max(1, (os.cpu_count() or 2) // 2)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session: Any = ort.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, in order; a text's vector does not depend on the others."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for row, encoding in enumerate(self.tokenizer.encode_batch(texts)):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            (states,) = self.session.run(None, feed)
            cls = states[0, 0].astype(np.float32)
            out[row] = cls / max(float(np.linalg.norm(cls)), 1e-12)
        return out
