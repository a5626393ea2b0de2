"""A plain numpy forward pass of a BERT sentence encoder (mean pooling, unit length).

An implementation independent of mnemo's ONNX graph, written from the BERT paper's and
sentence-transformers' definitions, to check the local embedder's vectors against.
Slow and simple on purpose: float64, one text at a time, no padding.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


class ReferenceEncoder:
    def __init__(self, model_dir: Path, max_tokens: int = 256) -> None:
        self.config = json.loads((model_dir / "config.json").read_text())
        self.w = {
            k: v.astype(np.float64)
            for k, v in load_file(str(model_dir / "model.safetensors")).items()
        }
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def encode_one(self, text: str) -> np.ndarray:
        c, w = self.config, self.w
        eps, heads = c["layer_norm_eps"], c["num_attention_heads"]
        ids = self.tokenizer.encode(text).ids
        n, width = len(ids), c["hidden_size"]
        head_dim = width // heads
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        for i in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._linear(x, f"{p}.attention.self.{part}").reshape(n, heads, head_dim)
                for part in ("query", "key", "value")
            )
            scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(head_dim)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = np.einsum("hqk,khd->qhd", probs, v).reshape(n, width)
            attended = self._linear(context, f"{p}.attention.output.dense")
            x = _layer_norm(
                attended + x,
                w[f"{p}.attention.output.LayerNorm.weight"],
                w[f"{p}.attention.output.LayerNorm.bias"],
                eps,
            )
            inner = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            out = self._linear(inner, f"{p}.output.dense")
            x = _layer_norm(
                out + x, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"], eps
            )
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)
