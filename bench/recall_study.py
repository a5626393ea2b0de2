"""How the context signal should move a memory, studied offline on both development sets.

Each question's hybrid pool (`POOL_DEPTH` candidates, as `Engine.search` ranks them before
the signals), its query intent and its candidates' neighbours are read once through the
store; every form below then re-ranks the same pools, with the time signal at the product's
weight. The forms (`z`: the memory's z-score in the pool, `n`: its better neighbour's):

- `add`: z + w * max(0, n), the neighbour's score above the pool's mean added (shipped off
  before 2026-12-08);
- `gap`: z + w * max(0, n - z), the memory closes a share of the gap to a better neighbour
  (the product's form since then);
- `inherit`: max(z, w * n), the better of its own score and a damped neighbour's.

    python -m bench.recall_study [--sets locomo,beam] [--weights 0.3,0.5,0.7]

Prints hybrid R_any@5 and @10 per form and weight, with the margin over no context and its
paired bootstrap interval (bench.recall_variants.bootstrap), and @5 per category.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.common import RESULTS_DIR as RESULTS
from bench.recall_variants import bootstrap
from bench.retrieval import ID_PROPERTY, KS, PROJECT, datasets, embedder_named, load
from bench.retrieval_data import Dataset, Question, shared_data
from mnemo.core.admission import memory_query
from mnemo.core.query_understanding import QueryIntent, understand
from mnemo.core.recall_signals import POOL_DEPTH, RecallWeights, boosts, pool_z
from mnemo.domain.memory import Memory
from mnemo.domain.requests import SearchRequest
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings
from mnemo.store import neighbours as neighbour_store
from mnemo.store import search as search_store

# (own z, better neighbour's z, weight) -> the memory's new z
Form = Callable[[float, float, float], float]
FORMS: dict[str, Form] = {
    "add": lambda z, n, w: z + w * max(0.0, n),
    "gap": lambda z, n, w: z + w * max(0.0, n - z),
    "inherit": lambda z, n, w: max(z, w * n),
}


@dataclass
class Pool:
    question: Question
    found: list[Memory]
    intent: QueryIntent
    near: dict[str, list[str]]


async def pools(data: Dataset) -> list[Pool]:
    """Every question's hybrid pool, intent and neighbours, in a fresh embedded database."""
    folder = RESULTS / "data" / f"recall-study-{data.name}"
    shutil.rmtree(folder, ignore_errors=True)
    engine = await start_engine(
        Settings(data_dir=folder), embedder=embedder_named("local", True), run_workers=False
    )
    out = []
    try:
        await load(engine, data)
        group = await engine.group(PROJECT, "default")
        for question in data.questions:
            request = SearchRequest.model_validate(
                {"query": question.text, "user_id": question.user}
            )
            query = memory_query(PROJECT, group, request, engine.settings.limits)

            async def embed_query(text: str = query.text) -> list[float]:
                return (await engine.deps.embedder.embed_query([text]))[0]

            found = await search_store.search(
                engine.db,
                query,
                group,
                embed_query,
                engine.corpus_stats,
                engine.settings.hybrid_alpha,
                pool=POOL_DEPTH,
            )
            near = await neighbour_store.neighbours(engine.db, query, group, [m.id for m in found])
            intent = understand(query.text, engine.deps.clock.now())
            out.append(Pool(question, found, intent, near))
    finally:
        save = getattr(engine.deps.embedder, "save", None)
        if save is not None:
            save()
        await engine.close()
        shutil.rmtree(folder, ignore_errors=True)
    return out


def ranked(pool: Pool, form: Form | None, weight: float, time_weight: float) -> list[str]:
    """The pool's document ids after the time signal and one context form, with the z-scores
    the product computes (`core.recall_signals.rerank`; `gap` is its ranking, a test checks)."""
    found = pool.found
    standard = pool_z(found, "hybrid") if found else None
    if standard is None:
        return [(m.properties or {}).get(ID_PROPERTY, "") for m in found]
    z = standard[0]
    timed = boosts(found, z, pool.intent, {}, RecallWeights(time=time_weight))
    moved = {}
    for m in found:
        near = [z[n] for n in pool.near.get(m.id, ()) if n in z]
        own = z[m.id]
        context = form(own, max(near), weight) - own if form is not None and near else 0.0
        moved[m.id] = own + timed[m.id] + context
    order = sorted(range(len(found)), key=lambda n: (-moved[found[n].id], n))
    return [(found[n].properties or {}).get(ID_PROPERTY, "") for n in order]


def hits(study: Sequence[Pool], form: Form | None, weight: float, time_weight: float) -> dict:
    """k -> one 0/1 per question; plus @5 per category."""
    out: dict[object, list[int]] = defaultdict(list)
    for pool in study:
        ids = ranked(pool, form, weight, time_weight)
        for k in KS:
            hit = int(bool(pool.question.evidence & set(ids[:k])))
            out[k].append(hit)
            if k == KS[0]:
                out[pool.question.category].append(hit)
    return out


def report(name: str, study: Sequence[Pool], weights: Sequence[float], time_weight: float) -> str:
    base = hits(study, None, 0.0, time_weight)
    rows = [("none", base)]
    rows += [
        (f"{label} {w}", hits(study, form, w, time_weight))
        for label, form in FORMS.items()
        for w in weights
    ]
    categories = sorted(c for c in base if isinstance(c, str))
    lines = [f"{name} ({len(study)} questions), hybrid, time weight {time_weight}"]
    for label, found in rows:
        cells = "".join(
            f"  @{k} {statistics.fmean(found[k]):.3f} "
            + "{:+.3f} [{:+.3f}, {:+.3f}]".format(*bootstrap(found[k], base[k]))
            for k in KS
        )
        per = " ".join(f"{c[:8]} {statistics.fmean(found[c]):.2f}" for c in categories)
        lines.append(f"{label:<12}{cells}   {per}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="locomo,beam", help="comma-separated: beam, locomo")
    parser.add_argument("--weights", default="0.3,0.5,0.7", help="context weights to try")
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    time_weight = float(Settings.model_fields["recall_time_weight"].default)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    for data in datasets(sets, shared_data()):
        study = asyncio.run(pools(data))
        print(report(data.name, study, weights, time_weight), flush=True)


if __name__ == "__main__":
    main()
