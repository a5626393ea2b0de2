"""Which databases the embedded mode converts to the bundled model, and which stored
thresholds it names as chosen on the old model's scale."""

from __future__ import annotations

from mnemo.core.model_upgrade import low_thresholds, upgradable
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.embeddings.local import LocalEmbedder
from mnemo.store.embedder_identity import EmbedderMismatch


def refused(stored: str | None, unlabelled: bool = False) -> EmbedderMismatch:
    return EmbedderMismatch("refused", stored, unlabelled)


def test_only_the_earlier_bundled_model_meeting_the_bundled_one_is_converted() -> None:
    bundled = LocalEmbedder()
    assert upgradable(refused("local:all-MiniLM-L6-v2"), bundled)
    assert upgradable(refused(None, unlabelled=True), bundled)  # from before labels, not bge's
    assert not upgradable(refused(None), bundled)  # another vector size
    assert upgradable(refused("reembedding:" + bundled.label), bundled)  # a cut pass
    assert not upgradable(refused("openai-compatible:nomic-embed-text"), bundled)
    assert not upgradable(refused("reembedding:hash:384"), bundled)
    assert not upgradable(refused("local:all-MiniLM-L6-v2"), HashEmbedder())


def test_thresholds_below_the_defaults_are_named() -> None:
    config = {
        "pipeline": {"steps": [
            {"id": "reconcile", "kind": "transform_with_context", "min_similarity": 0.3},
            {"id": "always", "kind": "transform_with_context", "min_similarity": -1},
            {"id": "commit", "kind": "commit"},
        ]},
        "consolidation": {"similarity": 0.3},
        "reconsolidation": {"min_similarity": 0.7},
    }  # fmt: skip
    assert low_thresholds(config) == [
        ("consolidation.similarity", 0.3, 0.6),
        ("step reconcile.min_similarity", 0.3, 0.6),
    ]
    assert low_thresholds({"pipeline": {"steps": []}}) == []
