"""Clustering a scope's episodes by embedding similarity, for consolidation.

The method, deterministic for given vectors in a given order (episodes oldest first):
- vectors are the stored unit-length embeddings, so cosine similarity is a dot product;
- an episode first joins an existing rule's cluster when its mean similarity to that rule's
  sources is at least `threshold` (the rule with the highest mean wins, ties to the earlier);
- the remaining episodes are clustered by average linkage: starting from singletons, the
  two clusters with the highest mean pairwise similarity merge while that mean is at least
  `threshold`; ties go to the pair with the lowest indices.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _matrix(vectors: Sequence[np.ndarray]) -> np.ndarray:
    return np.vstack([np.asarray(v, dtype=np.float64) for v in vectors])


def assign_to_rules(
    episodes: Sequence[np.ndarray], rules: Sequence[Sequence[np.ndarray]], threshold: float
) -> list[int | None]:
    """For each episode, the index of the rule whose cluster it joins, or None."""
    if not episodes:
        return []
    candidates = [(i, _matrix(sources)) for i, sources in enumerate(rules) if len(sources)]
    if not candidates:
        return [None] * len(episodes)
    x = _matrix(episodes)
    means = np.column_stack([(x @ sources.T).mean(axis=1) for _, sources in candidates])
    best = np.argmax(means, axis=1)  # the first maximum: ties go to the earlier rule
    return [
        candidates[int(b)][0] if means[row, b] >= threshold else None for row, b in enumerate(best)
    ]


def cluster(vectors: Sequence[np.ndarray], threshold: float) -> list[list[int]]:
    """Average-linkage clusters of `vectors` (indices, each cluster ascending), ordered by
    their first member. Every vector is in exactly one cluster (singletons included)."""
    n = len(vectors)
    if n == 0:
        return []
    x = _matrix(vectors)
    sums = x @ x.T  # pairwise similarity sums between clusters (singletons at first)
    sizes = np.ones(n)
    alive = np.ones(n, dtype=bool)
    members: list[list[int]] = [[i] for i in range(n)]
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    while alive.sum() > 1:
        means = sums / np.outer(sizes, sizes)
        usable = upper & np.outer(alive, alive)
        scores = np.where(usable, means, -np.inf)
        flat = int(np.argmax(scores))  # the first maximum: the lowest (i, j)
        i, j = divmod(flat, n)
        if not np.isfinite(scores[i, j]) or scores[i, j] < threshold:
            break
        sums[i, :] += sums[j, :]
        sums[:, i] += sums[:, j]
        sizes[i] += sizes[j]
        alive[j] = False
        members[i] = sorted(members[i] + members[j])
        members[j] = []
    return sorted((m for m, a in zip(members, alive, strict=True) if a), key=lambda m: m[0])


def typical_of(joining: Sequence[np.ndarray], sources: Sequence[np.ndarray]) -> bool:
    """Whether every joining episode is at least as typical of a rule's sources as they are
    of each other: its mean similarity to the sources reaches the sources' own mean pairwise
    similarity. Such an episode is one more instance of what the rule already rests on.
    False with fewer than two sources (there is no spread to compare with)."""
    if len(sources) < 2 or not joining:
        return False
    s = _matrix(sources)
    pairs = s @ s.T
    n = len(sources)
    spread = float((pairs.sum() - np.trace(pairs)) / (n * (n - 1)))
    means = (_matrix(joining) @ s.T).mean(axis=1)
    return bool(np.all(means >= spread))
