"""The recall signals move a pool's candidates (mnemo.core.recall_signals)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from mnemo.core.query_understanding import QueryIntent, Window
from mnemo.core.recall_signals import RecallWeights, names_match, rerank
from mnemo.domain.memory import Memory
from mnemo.domain.search import RetrievalType

AT = datetime(2026, 1, 1, tzinfo=UTC)
JULY = Window(date(2023, 7, 1), date(2023, 7, 31))


def memory(
    id_: str,
    score: float,
    content: str = "a memory",
    when: datetime = AT,
    properties: dict[str, str] | None = None,
) -> Memory:
    return Memory(
        id=id_,
        project_id="p",
        content=content,
        topic="t",
        group="g",
        created_at=AT,
        updated_at=AT,
        score=score,
        event_time=when,
        event_time_end=when,
        properties=properties,
    )


def pool(kind: RetrievalType) -> list[Memory]:
    """Eight candidates, best first, in the mode's own score form."""
    scores = {
        "vector": [0.90, 0.88, 0.86, 0.85, 0.84, 0.83, 0.82, 0.80],
        "bm25": [0.80, 0.75, 0.70, 0.66, 0.60, 0.55, 0.50, 0.40],
        "hybrid": [0.95, 0.90, 0.80, 0.70, 0.60, 0.50, 0.40, 0.30],
    }[kind]
    return [memory(f"m{n}", s) for n, s in enumerate(scores)]


def ids(found: list[Memory]) -> list[str]:
    return [m.id for m in found]


@pytest.mark.parametrize("kind", ["vector", "bm25", "hybrid"])
def test_without_signals_the_lists_order_stands(kind: RetrievalType) -> None:
    found = pool(kind)
    intent = QueryIntent((JULY,), frozenset({"caroline"}))
    assert rerank(found, kind, intent, {}, RecallWeights(), 3) == found[:3]


@pytest.mark.parametrize("kind", ["vector", "bm25", "hybrid"])
def test_a_memory_in_the_window_moves_up_in_every_mode(kind: RetrievalType) -> None:
    found = pool(kind)
    found[5] = memory("m5", found[5].score or 0, when=datetime(2023, 7, 14, tzinfo=UTC))
    moved = rerank(found, kind, QueryIntent((JULY,)), {}, RecallWeights(time=1.5), 4)
    assert "m5" in ids(moved)
    assert ids(moved).index("m5") < 5
    # scores stay in [0, 1] and read best first
    scores = [m.score or 0 for m in moved]
    assert scores == sorted(scores, reverse=True)
    assert all(0 <= s <= 1 for s in scores)
    # without a window in the query nothing moves
    assert rerank(found, kind, QueryIntent(), {}, RecallWeights(time=1.5), 4) == found[:4]


@pytest.mark.parametrize("kind", ["vector", "bm25", "hybrid"])
def test_a_named_speaker_moves_up(kind: RetrievalType) -> None:
    found = pool(kind)
    found[6] = memory("m6", found[6].score or 0, content="[8 May, 2023] Caroline: I went there!")
    moved = rerank(
        found, kind, QueryIntent(names=frozenset({"caroline"})), {}, RecallWeights(names=2.0), 5
    )
    assert "m6" in ids(moved)


def test_names_match_the_head_and_the_properties_not_the_whole_text() -> None:
    names = frozenset({"caroline"})
    assert names_match(names, memory("a", 0.5, "Caroline adopted a dog."))
    assert names_match(names, memory("b", 0.5, "[1:56 pm on 8 May, 2023] Caroline: hi"))
    assert names_match(names, memory("c", 0.5, "likes tea", properties={"person": "Caroline"}))
    assert not names_match(names, memory("d", 0.5, "Melanie said that she met Caroline."))


@pytest.mark.parametrize("kind", ["vector", "bm25", "hybrid"])
def test_a_neighbour_of_a_strong_hit_moves_up(kind: RetrievalType) -> None:
    found = pool(kind)
    # m7, the pool's weakest, was written right after m0, its best
    near = {"m7": ["m0", "m6"], "m0": ["m7"]}
    moved = rerank(found, kind, QueryIntent(), near, RecallWeights(context=1.0), 5)
    assert "m7" in ids(moved)
    # a neighbour weaker than the memory lifts nothing
    near = {"m6": ["m7"]}
    assert rerank(found, kind, QueryIntent(), near, RecallWeights(context=1.0), 8) == [
        m.model_copy(update={"score": round(m.score or 0, 6)}) for m in found
    ]


@pytest.mark.parametrize("kind", ["vector", "bm25", "hybrid"])
def test_context_closes_a_share_of_the_gap_to_the_better_neighbour(kind: RetrievalType) -> None:
    found = pool(kind)
    # m1 and m2 are adjacent turns of m0's run; m3 is alone in its own
    near = {"m0": ["m1"], "m1": ["m0", "m2"], "m2": ["m1"]}
    scores = {
        m.id: m.score
        for m in rerank(found, kind, QueryIntent(), near, RecallWeights(context=1.0), 8)
    }
    # the whole gap at weight 1: m1 and m2 reach their better neighbour's own score (not
    # its moved one: lifts do not chain along a run)
    assert scores["m1"] == scores["m0"] == round(found[0].score or 0, 6)
    assert scores["m2"] == round(found[1].score or 0, 6)
    half = {
        m.id: m for m in rerank(found, kind, QueryIntent(), near, RecallWeights(context=0.5), 8)
    }
    assert (found[1].score or 0) < (half["m1"].score or 0) < (found[0].score or 0)
    # the run's best turn is not lifted by its weaker neighbour (adding the neighbour's
    # whole score did that, and crowded the cut with one run's turns)
    assert half["m0"].score == round(found[0].score or 0, 6)
    assert half["m3"].score == round(found[3].score or 0, 6)
