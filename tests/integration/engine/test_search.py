"""Search modes on real Postgres: BM25 ranking, hybrid fusion and odd query texts."""

from __future__ import annotations

import pytest

from mnemo.engine.engine import Engine
from tests.integration.engine.helpers import add_and_wait, facts, search

pytestmark = pytest.mark.integration

DOCS = (
    "The cat sat on the mat.",
    "Dogs chase cats in the park.",
    "The stock market fell today.",
    "See https://example.com/a:b for the e-mail foo|bar.",
)


@pytest.fixture
async def corpus(engine: Engine, project: str) -> str:
    await add_and_wait(
        engine, project, {"user_id": "u", "input": facts(*(("UserKnowledge", d) for d in DOCS))}
    )
    return project


async def test_bm25_ranks_by_term_weight_and_skips_non_matches(engine: Engine, corpus: str) -> None:
    hits = await search(
        engine, corpus, "cat on a mat", "bm25", user_id="u", topics=["UserKnowledge"]
    )
    assert [m.content for m in hits] == ["The cat sat on the mat.", "Dogs chase cats in the park."]
    assert 0 < hits[1].score < hits[0].score < 1  # type: ignore[operator]


@pytest.mark.parametrize("query", [":", "the of and", "it's O'Reilly's & !x | ", "example.com/a:b"])
async def test_odd_query_texts_never_fail(engine: Engine, corpus: str, query: str) -> None:
    for mode in ("bm25", "hybrid", "vector"):
        hits = await search(engine, corpus, query, mode, user_id="u", topics=["UserKnowledge"])
        assert all(0 <= (m.score or 0) <= 1 for m in hits)


async def test_hybrid_puts_the_match_of_both_lists_first(engine: Engine, corpus: str) -> None:
    hits = await search(engine, corpus, "stock market", user_id="u", topics=["UserKnowledge"])
    assert hits[0].content == "The stock market fell today." and hits[0].score == 1.0
