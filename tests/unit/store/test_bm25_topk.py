"""Which terms the pruned BM25 top-k reads in full (`seed_terms`): a guess that decides
speed only (the statement checks the pruning and falls back), so these pin the intent."""

from __future__ import annotations

from mnemo.store.bm25_topk import seed_terms


def test_a_term_in_nearly_every_memory_is_left_to_lookups() -> None:
    frequencies = {"user": 99_000, "sushi": 1_200, "like": 30_000}
    assert seed_terms(frequencies, 100_000, 40) == ["sushi"]


def test_terms_little_commoner_than_the_seeds_are_read_too() -> None:
    # Looking "sci-fi" up in each memory of the other three would cost more than reading
    # it; with "user" left out too, the lookups pay.
    frequencies = {"sci-fi": 4_550, "sci": 4_550, "fi": 4_550, "novel": 4_550}
    assert seed_terms(frequencies, 100_000, 40) == ["fi", "novel", "sci", "sci-fi"]
    with_user = frequencies | {"user": 99_000}
    assert seed_terms(with_user, 100_000, 40) == ["fi", "novel", "sci"]


def test_terms_of_equal_weight_are_all_read() -> None:
    frequencies = {"dark": 4_000, "roast": 4_000, "coffe": 4_000}
    assert seed_terms(frequencies, 100_000, 40) == ["coffe", "dark", "roast"]


def test_known_terms_are_added_until_they_can_fill_the_top_k() -> None:
    frequencies = {"user": 99_000, "sushi": 3, "tokyo": 5, "ramen": 50}
    assert seed_terms(frequencies, 100_000, 40) == ["sushi", "tokyo", "ramen"]


def test_terms_without_postings_are_not_read() -> None:
    assert seed_terms({"zebra": 0, "user": 10}, 100_000, 10) == ["user"]
    assert seed_terms({"zebra": 0}, 100_000, 10) == []
