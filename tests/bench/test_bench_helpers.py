"""Smoke tests of the benchmark helpers (no database, no network, no model)."""

from __future__ import annotations

import random

from bench.common import Table, pct, question, sentence
from bench.fake_llm import mem0_answer


def test_percentiles_by_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert pct(values, 50) == 50.0
    assert pct(values, 99) == 99.0
    assert pct([], 50) != pct([], 50)  # NaN


def test_table_renders_one_block() -> None:
    table = Table()
    table.add("s", "metric", "1 ms", "note")
    table.add("s", "other", "2 ms")
    text = table.render()
    assert "metric" in text and "other" in text and text.count("\n") == 5


def test_synthetic_text_is_distinct_with_serials() -> None:
    rng = random.Random(1)
    assert len({sentence(rng, i) for i in range(100)}) == 100
    assert len({question(rng, i) for i in range(100)}) == 100


def test_mem0_answer_echoes_user_lines() -> None:
    prompt = (
        "## Existing Memories\n[]\n\n## New Messages\nuser: I like tea\n\n## Observation Date\nx"
    )
    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": prompt}]}
    assert mem0_answer(body) == {"memory": [{"text": "User said: I like tea"}]}
