"""The recall signals (mnemo.core.recall_signals) one at a time and together, on one load.

`python -m bench.retrieval` loads a set once and searches every question in every mode under
each variant below (the engine's settings swapped between variants: the same memories, the
same vectors). `lists` is ranking without any signal (the product before them); `product`
is the shipped defaults. For each variant: R_any@5 and @10 per mode and category, the margin
of its hybrid over `lists`' hybrid with a paired bootstrap interval (questions resampled
2,000 times), and the mean time of one search per mode (wall time on whatever else the
machine runs: compare variants of one run, not runs).
"""

from __future__ import annotations

import random
import statistics
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence

from bench.retrieval import DEPTH, KS, MODES, Results, ranked
from bench.retrieval_data import Dataset
from mnemo.core.engine import Engine
from mnemo.settings import Settings

# Variants searched in every mode; the single signals only in hybrid (the product's default).
ALL_MODES = ("lists", "product")
OFF = {"recall_time_weight": 0.0, "recall_names_weight": 0.0, "recall_context_weight": 0.0}
_DEFAULTS = Settings.model_fields


def _default(name: str) -> float:
    return float(_DEFAULTS[name].default)


def variants() -> dict[str, dict[str, float]]:
    """Each signal alone at the product's weight (or 0.5 where the product has it off), all
    of them off, and the product's defaults."""
    alone = {
        "time": "recall_time_weight",
        "names": "recall_names_weight",
        "context": "recall_context_weight",
    }
    out: dict[str, dict[str, float]] = {"lists": dict(OFF)}
    for label, name in alone.items():
        out[f"+{label}"] = {**OFF, name: _default(name) or 0.5}
    out["product"] = {name: _default(name) for name in OFF}
    return out


Latency = dict[tuple[str, str], list[float]]


async def evaluate(
    engine: Engine, data: Dataset, chosen: Mapping[str, Mapping[str, float]]
) -> tuple[dict[str, Results], Latency]:
    """Every question in every mode under each variant; the seconds of each search."""
    base = engine.settings
    latency: Latency = defaultdict(list)
    settings = {name: base.model_copy(update=dict(overrides)) for name, overrides in chosen.items()}
    results = {name: Results(f"{data.name} [{name}]") for name in chosen}
    try:
        # Variants take turns on each question, so that a warming cache or a change in the
        # machine's load falls on all of them alike (run one after another, the first
        # variant paid for the cold cache: 47 ms a hybrid search against the next one's 20).
        for question in data.questions:
            for name in chosen:
                engine.settings = settings[name]
                for mode in MODES if name in ALL_MODES else ("hybrid",):
                    started = time.perf_counter()
                    hits = await ranked(engine, question.user, question.text, mode, DEPTH)
                    latency[(name, mode)].append(time.perf_counter() - started)
                    results[name].record(mode, question.category, question.evidence, hits)
    finally:
        engine.settings = base
    return results, latency


def _hits(results: Results, mode: str, k: int) -> list[int]:
    """One 0/1 per question, in the questions' order (categories concatenated alike)."""
    return [v for category in results.categories() for v in results.hits[(mode, category, k)]]


def bootstrap(
    ours: Sequence[int], theirs: Sequence[int], draws: int = 2000
) -> tuple[float, float, float]:
    """The mean paired difference and its 95% percentile interval over `draws` resamples."""
    pairs = [a - b for a, b in zip(ours, theirs, strict=True)]
    rng = random.Random(37)
    means = sorted(statistics.fmean(rng.choices(pairs, k=len(pairs))) for _ in range(draws))
    return statistics.fmean(pairs), means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def report(results: Mapping[str, Results], latency: Latency) -> str:
    """Per variant: the per-category table, then a margins and latency summary."""
    lines = [results[name].table() for name in results]
    lines.append(
        f"\n{'variant':<10}"
        + "".join(f"{'hybrid@' + str(k):>11}{'vs lists (95% CI)':>26}" for k in KS)
        + "".join(f"{m + ' ms':>11}" for m in MODES)
    )
    for name, figures in results.items():
        row = f"{name:<10}"
        for k in KS:
            mean, low, high = bootstrap(
                _hits(figures, "hybrid", k), _hits(results["lists"], "hybrid", k)
            )
            row += f"{figures.recall('hybrid', k):>11.3f}{f'{mean:+.3f} [{low:+.3f}, {high:+.3f}]':>26}"
        row += "".join(
            f"{1000 * statistics.fmean(latency[(name, m)]):>11.1f}"
            if latency.get((name, m))
            else f"{'-':>11}"
            for m in MODES
        )
        lines.append(row)
    return "\n\n".join(lines[: -len(results) - 1]) + "\n" + "\n".join(lines[-len(results) - 1 :])


def rows(results: Mapping[str, Results], latency: Latency) -> list[tuple[str, str]]:
    """`make bench` rows: each variant's hybrid R@5 / @10, its margin over `lists` with the
    95% interval at k 5, and its mean hybrid search time."""
    out = []
    for name, figures in results.items():
        mean, low, high = bootstrap(
            _hits(figures, "hybrid", 5), _hits(results["lists"], "hybrid", 5)
        )
        ms = 1000 * statistics.fmean(latency[(name, "hybrid")])
        out.append(
            (
                f"signals {name}: hybrid R@5 / @10, margin @5 [95%], ms",
                f"{figures.recall('hybrid', 5):.3f} / {figures.recall('hybrid', 10):.3f}  "
                f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]  {ms:.1f} ms",
            )
        )
    return out
