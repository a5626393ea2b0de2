"""Average-linkage clustering and joining existing rules (consolidation)."""

from __future__ import annotations

import numpy as np

from mnemo.steps.clustering import assign_to_rules, cluster


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v / np.linalg.norm(v)


A, B, C = unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)


def near(v: np.ndarray, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return unit(*(v + noise * rng.normal(size=v.size)))


def test_two_themes_and_a_stray() -> None:
    vectors = [near(A, 0.1, 1), near(B, 0.1, 2), near(A, 0.1, 3), near(B, 0.1, 4), C]
    assert cluster(vectors, 0.5) == [[0, 2], [1, 3], [4]]


def test_the_threshold_stops_merging() -> None:
    vectors = [A, unit(1, 1, 0), B]  # A·AB = B·AB = 0.71, A·B = 0
    assert cluster(vectors, 0.8) == [[0], [1], [2]]
    # average linkage: {A, AB} then B joins at mean (0 + 0.71) / 2 = 0.35
    assert cluster(vectors, 0.5) == [[0, 1], [2]]
    assert cluster(vectors, 0.3) == [[0, 1, 2]]


def test_deterministic_and_order_based_ties() -> None:
    vectors = [A, A, A]
    assert cluster(vectors, 0.99) == [[0, 1, 2]]
    shuffled = [near(A, 0.05, s) for s in range(6)]
    assert cluster(shuffled, 0.5) == cluster(list(shuffled), 0.5) == [[0, 1, 2, 3, 4, 5]]
    assert cluster([], 0.5) == []


def test_episodes_join_the_most_similar_rule_above_the_threshold() -> None:
    rules = [[A, near(A, 0.1, 5)], [B], []]
    joins = assign_to_rules([near(A, 0.1, 6), near(B, 0.1, 7), C], rules, 0.6)
    assert joins == [0, 1, None]
    assert assign_to_rules([A], [[], []], 0.0) == [None]
    assert assign_to_rules([], rules, 0.0) == []


def test_an_episode_as_typical_as_the_sources_are_of_each_other() -> None:
    from mnemo.steps.clustering import typical_of

    sources = [near(A, 0.3, 1), near(A, 0.3, 2), near(A, 0.3, 3)]
    assert typical_of([A], sources)  # the centre is closer to each than they are to each other
    assert not typical_of([near(A, 1.5, 4)], sources)  # an outlier that still leans to A
    assert not typical_of([A, B], sources)  # every joiner must be typical
    assert not typical_of([A], sources[:1])  # one source: no spread to compare with
