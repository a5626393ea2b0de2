"""Hybrid fusion (store.search.fuse): z-scores per list, equal weights by default."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from mnemo.store.search import fuse, standardise


def ranked(*pairs: tuple[str, float]) -> list[tuple[SimpleNamespace, float]]:
    return [(SimpleNamespace(id=memory_id), score) for memory_id, score in pairs]


def ids(hits: list[tuple[SimpleNamespace, float]]) -> list[str]:
    return [row.id for row, _ in hits]


def test_standardise_gives_mean_zero_and_unit_spread() -> None:
    z = standardise(ranked(("a", 3.0), ("b", 1.0), ("c", 2.0)))
    assert z["c"] == 0.0
    assert z["a"] == pytest.approx(-z["b"]) == pytest.approx(math.sqrt(1.5))


def test_a_list_of_equal_scores_carries_no_preference() -> None:
    assert standardise(ranked(("a", 0.7), ("b", 0.7))) == {"a": 0.0, "b": 0.0}
    assert standardise([]) == {}


def min_max(pairs: list[tuple[SimpleNamespace, float]]) -> dict[str, float]:
    low, high = min(s for _, s in pairs), max(s for _, s in pairs)
    return {row.id: (s - low) / (high - low) for row, s in pairs}


def test_a_standout_outweighs_the_first_of_an_evenly_spread_list() -> None:
    """Min-max pins every list's best to 1 whatever its lead; z-scores keep the lead: "a"
    stands far above the rest of the vector list, "b" only heads an evenly spread keyword
    list. Min-max (the former fusion) puts "b" first; z-score fusion puts "a" first."""
    others = [f"o{i}" for i in range(8)]
    vector = ranked(("a", 0.95), ("b", 0.47), *((o, 0.46 - 0.01 * i) for i, o in enumerate(others)))
    keyword = ranked(("b", 10.0), *((o, 9.0 - i) for i, o in enumerate(others[:7])))
    keyword += ranked(("a", 2.0), (others[7], 1.0))
    mm_vector, mm_keyword = min_max(vector), min_max(keyword)
    assert mm_vector["b"] + mm_keyword["b"] > mm_vector["a"] + mm_keyword["a"]
    assert ids(fuse(vector, keyword, 0.5, 2)) == ["a", "b"]


def test_the_scale_of_a_list_does_not_matter() -> None:
    vector = ranked(("a", 0.9), ("b", 0.8), ("c", 0.1))
    keyword = ranked(("c", 3.0), ("b", 2.0), ("a", 1.0))
    scaled = [(row, 1000 * score + 7) for row, score in keyword]
    assert fuse(vector, keyword, 0.5, 3) == fuse(vector, scaled, 0.5, 3)


def test_a_memory_missing_from_a_list_gets_that_lists_lowest_z() -> None:
    vector = ranked(("a", 0.9), ("b", 0.5), ("c", 0.1))
    keyword = ranked(("x", 5.0), ("a", 1.0))
    fused = dict((row.id, score) for row, score in fuse(vector, keyword, 0.5, 10))
    z_vector, z_keyword = standardise(vector), standardise(keyword)
    expected_x = 0.5 * min(z_vector.values()) + 0.5 * z_keyword["x"]
    assert fused["x"] == pytest.approx(1 / (1 + math.exp(-expected_x)))
    assert fused["c"] < fused["b"]  # both missing from the keyword list: vector decides


def test_alpha_weighs_the_lists_and_scores_stay_in_the_unit_interval() -> None:
    vector = ranked(("v", 0.9), ("k", 0.1))
    keyword = ranked(("k", 9.0), ("v", 1.0))
    assert ids(fuse(vector, keyword, 1.0, 2)) == ["v", "k"]
    assert ids(fuse(vector, keyword, 0.0, 2)) == ["k", "v"]
    assert all(0 < score < 1 for _, score in fuse(vector, keyword, 0.5, 2))
    assert fuse(vector, [], 0.5, 1)[0][0].id == "v"  # no keyword match at all


def test_an_exact_tie_goes_to_the_vector_lists_favourite() -> None:
    """Two candidates the lists rank oppositely tie at alpha 0.5 (z = +1 / -1 in each): the
    vector list decides, whatever their ids."""
    for first, second in (("a", "b"), ("b", "a")):
        vector = ranked((first, 0.9), (second, 0.5))
        keyword = ranked((second, 2.0), (first, 1.0))
        assert ids(fuse(vector, keyword, 0.5, 10)) == [first, second]
