"""A vector's bind text names the very float32 values pgvector's own text does."""

from __future__ import annotations

import numpy as np
import pytest
from pgvector import Vector as PgVector

from mnemo.store.vector_text import vector_text


def _values(text: str) -> np.ndarray:
    assert text.startswith("[") and text.endswith("]")
    return np.array(text[1:-1].split(","), dtype=np.float32)  # strtof, as Postgres parses


def test_every_float32_survives_the_shorter_text() -> None:
    rng = np.random.default_rng(7)
    scales = np.logspace(-38, 38, 20_000)
    vector = (rng.standard_normal(20_000) * scales).astype(np.float32)
    vector[:4] = [0.0, -0.0, np.finfo(np.float32).tiny, np.finfo(np.float32).max]
    text = vector_text(vector.tolist())
    assert text is not None
    assert np.array_equal(_values(text), vector)
    reference = PgVector._to_db(vector.tolist())
    assert np.array_equal(_values(text), _values(reference))
    assert len(text) < len(reference)


def test_lists_and_arrays_alike() -> None:
    unit = np.random.default_rng(1).standard_normal(384).astype(np.float32)
    unit /= np.linalg.norm(unit)
    assert vector_text(unit) == vector_text(unit.tolist())
    assert vector_text([1, 0.5]) == "[1,0.5]"


def test_none_and_other_values_go_to_pgvector() -> None:
    assert vector_text(None) is None
    with pytest.raises(ValueError):
        vector_text(np.zeros((2, 2)))
    with pytest.raises(ValueError):
        vector_text("[1,2]")
