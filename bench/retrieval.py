"""Retrieval check on the development sets (no LLM): R_any@k of vector, bm25 and hybrid.

Every document is committed as one memory of its user through the commit step's own code
(`commits.apply`, with the embedder's vectors), tagged with its id; every
question is searched through `Engine.search` (the API's code path) in each mode; a question
counts as a hit at k when one of its top-k results carries one of its evidence ids.
Reported overall and per category, for k = 5 and 10, on BEAM-128K and LoCoMo dev
(bench/retrieval_data.py says where the data comes from and whom to cite).

    python -m bench.retrieval [--sets beam,locomo] [--embedder local|<candidate>]
                              [--fusion-study] [--json out.json] [--no-signals]

Before the product's table, each set prints the recall signals' variants (see
bench/recall_variants.py): every mode under each signal alone, none, and the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import RESULTS_DIR as RESULTS
from bench.common import Table
from bench.retrieval_data import Dataset, beam, locomo, shared_data
from mnemo.contracts.embedder import Embedder
from mnemo.core.engine import Engine
from mnemo.domain.memory import Candidate
from mnemo.domain.requests import SearchRequest
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings
from mnemo.store import commits

MODES = ("vector", "bm25", "hybrid")
KS = (5, 10)
DEPTH = 10  # results asked of each mode: the largest k
PROJECT = "default"
TOPIC = "UserKnowledge"
ID_PROPERTY = "doc_id"
COMMIT_BATCH = 500
# A memory records only the properties its topic is scoped by, so the document id a hit is
# judged by is a scope property (searches omit it, so they see every document of the user).
GROUP: dict[str, object] = {
    "topics": [
        {
            "name": TOPIC,
            "description": "One message of the conversation.",
            "scoping": {"user_scoped": True, "scope_properties": [ID_PROPERTY]},
        }
    ],
    # Never run here: documents are committed directly (see `load`).
    "pipeline": {
        "steps": [
            {"id": "given", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
            {"id": "commit", "kind": "commit"},
        ]
    },
}

# One ranking: (document id, score), best first.
Ranked = list[tuple[str, float]]


@dataclass
class Results:
    """Per mode: one 0/1 per question and k, with the question's category."""

    dataset: str
    hits: dict[tuple[str, str, int], list[int]] = field(default_factory=lambda: defaultdict(list))

    def record(self, mode: str, category: str, evidence: frozenset[str], ranked: Ranked) -> None:
        ids = [doc_id for doc_id, _ in ranked]
        for k in KS:
            self.hits[(mode, category, k)].append(int(bool(evidence & set(ids[:k]))))

    def modes(self) -> list[str]:
        return list(dict.fromkeys(m for m, _, _ in self.hits))

    def categories(self) -> list[str]:
        return sorted({c for _, c, _ in self.hits})

    def recall(self, mode: str, k: int, category: str | None = None) -> float:
        values = [
            v
            for (m, c, kk), vs in self.hits.items()
            if m == mode and kk == k and category in (None, c)
            for v in vs
        ]
        return sum(values) / max(1, len(values))

    def count(self, category: str | None = None) -> int:
        mode = self.modes()[0]
        return sum(
            len(vs)
            for (m, c, k), vs in self.hits.items()
            if m == mode and k == KS[0] and category in (None, c)
        )

    def hybrid_beats_components(self) -> bool:
        return all(
            self.recall("hybrid", k) > max(self.recall("vector", k), self.recall("bm25", k))
            for k in KS
        )

    def table(self) -> str:
        modes = self.modes()
        width = {m: max(11, len(m) + 5) for m in modes}
        head = f"{self.dataset:<26}{'n':>5}" + "".join(
            f"{m + '@' + str(k):>{width[m]}}" for m in modes for k in KS
        )
        lines = [head]
        for category in [*self.categories(), None]:
            row = f"{category or 'overall':<26}{self.count(category):>5}"
            row += "".join(
                f"{self.recall(m, k, category):>{width[m]}.3f}" for m in modes for k in KS
            )
            lines.append(row)
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "overall": {f"{m}@{k}": self.recall(m, k) for m in self.modes() for k in KS},
            "categories": {
                c: {f"{m}@{k}": self.recall(m, k, c) for m in self.modes() for k in KS}
                for c in self.categories()
            },
        }


async def load(engine: Engine, data: Dataset) -> None:
    """Commit every document as a memory of its user, through the commit step's code."""
    group = await engine.put_group(PROJECT, "default", GROUP)
    embedder = engine.deps.embedder
    for user, docs in data.documents.items():
        for first in range(0, len(docs), COMMIT_BATCH):
            batch = docs[first : first + COMMIT_BATCH]
            contents = [text for _, text in batch]
            vectors = await embedder.embed(contents)
            # one run per session and each message's own time, as an add of the session's
            # messages would store them (a memory's neighbours are its run's; see
            # mnemo.store.neighbours)
            candidates = [
                Candidate(
                    content=text,
                    topic=TOPIC,
                    user_id=user,
                    properties={ID_PROPERTY: doc_id},
                    run_id=f"bench-{data.origins[(user, doc_id)].session}",
                    event_time=data.origins[(user, doc_id)].time,
                    event_time_end=data.origins[(user, doc_id)].time,
                )
                for doc_id, text in batch
            ]
            batch_id = f"bench-{uuid.uuid4()}"
            now = engine.deps.clock.now()
            embeddings = dict(zip(contents, vectors, strict=True))
            async with engine.db.begin() as tx:
                await commits.apply(tx, batch_id, PROJECT, group, candidates, embeddings, now)


async def ranked(engine: Engine, user: str, text: str, mode: str, limit: int) -> Ranked:
    request = SearchRequest.model_validate(
        {
            "query": text,
            "user_id": user,
            "retrieval_config": {"retrieval_type": mode, "limit": limit},
        }
    )
    found = await engine.search(PROJECT, request)
    return [((m.properties or {}).get(ID_PROPERTY, ""), m.score or 0.0) for m in found]


async def deep_ranked(engine: Engine, user: str, text: str, mode: str, limit: int) -> Ranked:
    """A list deeper than the API's 100-result cap, from the store's own vector or keyword
    search (the halves hybrid fuses), for the fusion study."""
    from mnemo.core.admission import memory_query
    from mnemo.store import search as store
    from mnemo.store.tenancy import visible_memories

    request = SearchRequest.model_validate({"query": text, "user_id": user})
    group = await engine.group(PROJECT, "default")
    query = memory_query(PROJECT, group, request, engine.settings.limits)
    where = visible_memories(query, group)
    async with engine.db.connect() as conn:
        if mode == "vector":
            embedding = (await engine.deps.embedder.embed_query([text]))[0]
            hits = await store.vector_search(conn, where, embedding, limit)
        else:
            hits = await store.keyword_search(conn, where, text, limit, engine.corpus_stats)
    return [((row.properties or {}).get(ID_PROPERTY, ""), score) for row, score in hits]


async def evaluate(
    engine: Engine, data: Dataset, modes: Sequence[str] = MODES, study_depth: int = 0
) -> tuple[Results, list[dict[str, Ranked]]]:
    """Search every question in every mode. With `study_depth`, also return each question's
    vector and bm25 lists that deep (for bench.fusion_study)."""
    results = Results(data.name)
    lists: list[dict[str, Ranked]] = []
    for question in data.questions:
        for mode in modes:
            hits = await ranked(engine, question.user, question.text, mode, DEPTH)
            results.record(mode, question.category, question.evidence, hits)
        if study_depth:
            lists.append(
                {
                    mode: await deep_ranked(engine, question.user, question.text, mode, study_depth)
                    for mode in ("vector", "bm25")
                }
            )
    return results, lists


def embedder_named(name: str, cache: bool = False) -> Embedder | None:
    """None for the product's own embedder (unless cached); otherwise a bench candidate."""
    if name == "local" and not cache:
        return None
    if name == "local":
        from mnemo.embeddings.local import LocalEmbedder

        embedder: Embedder = LocalEmbedder()
    else:
        from bench.embedders import candidate

        embedder = candidate(name)
    if cache:
        from bench.embedders import CachedEmbedder

        # named by the model's label: "local" names whichever model the product ships
        file_name = embedder.label.replace(":", "_").replace("/", "_") + ".pkl"
        embedder = CachedEmbedder(embedder, RESULTS / "embed-cache" / file_name)
    return embedder


def datasets(sets: Sequence[str], data_root: Path, beam_chats: int | None = None) -> list[Dataset]:
    loaders = {
        "beam": lambda: beam(data_root / "beam-128k", beam_chats),
        "locomo": lambda: locomo(data_root / "locomo-dev" / "locomo-dev.json"),
    }
    return [loaders[name]() for name in sets]


async def run_one(
    data: Dataset,
    embedder_name: str = "local",
    study_depth: int = 0,
    settings: dict[str, object] | None = None,
    cache: bool = False,
    compare_signals: bool = False,
    signal_rows: list[tuple[str, str]] | None = None,
) -> tuple[Results, list[dict[str, Ranked]], float]:
    """One set in a fresh embedded database; returns (results, study lists, seconds). With
    `compare_signals`, first prints every recall-signal variant (bench.recall_variants)."""
    started = time.perf_counter()
    # Under bench/results like the other sections: the embedded Postgres (its own user when
    # run as root) must be able to traverse the folder, which a private temp dir is not.
    folder = RESULTS / "data" / f"retrieval-{data.name}"
    shutil.rmtree(folder, ignore_errors=True)
    try:
        engine = await start_engine(
            Settings(data_dir=folder, **(settings or {})),  # type: ignore[arg-type]
            embedder=embedder_named(embedder_name, cache),
            run_workers=False,
        )
        try:
            await load(engine, data)
            if compare_signals:
                from bench import recall_variants

                by_variant, latency = await recall_variants.evaluate(
                    engine, data, recall_variants.variants()
                )
                print(f"\n{recall_variants.report(by_variant, latency)}", flush=True)
                if signal_rows is not None:
                    signal_rows += recall_variants.rows(by_variant, latency)
            if compare_signals and not study_depth:
                # the product's variant is the product's search: not run twice
                results, lists = by_variant["product"], []
                results.dataset = data.name
            else:
                results, lists = await evaluate(engine, data, study_depth=study_depth)
        finally:
            save = getattr(engine.deps.embedder, "save", None)
            if save is not None:
                save()
            await engine.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results, lists, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="beam,locomo", help="comma-separated: beam, locomo")
    parser.add_argument("--embedder", default="local", help="local or a bench.embedders name")
    parser.add_argument("--data", type=Path, default=None, help="folder holding both sets")
    parser.add_argument(
        "--fusion-study", action="store_true", help="also score fusion variants offline"
    )
    parser.add_argument("--study-depth", type=int, default=40, help="list depth for the study")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument(
        "--cache",
        action="store_true",
        help="reuse vectors from earlier runs (bench/results/embed-cache; same model outputs)",
    )
    parser.add_argument(
        "--lists", type=Path, default=None, help="with --fusion-study: write each question's lists"
    )
    parser.add_argument(
        "--no-signals",
        dest="signals",
        action="store_false",
        help="skip the recall-signal variants (bench.recall_variants); print the product only",
    )
    parser.add_argument(
        "--beam-chats",
        type=int,
        default=None,
        help="only BEAM's first N chats (all 20 by default; a quick check, not the set)",
    )
    args = parser.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    depth = args.study_depth if args.fusion_study else 0
    figures = []
    for data in datasets(sets, args.data or shared_data(), args.beam_chats):
        results, lists, seconds = asyncio.run(
            run_one(data, args.embedder, depth, cache=args.cache, compare_signals=args.signals)
        )
        figures.append(results.as_dict())
        print(f"\n{results.table()}\n({seconds:.0f} s; embedder {args.embedder})", flush=True)
        if args.fusion_study:
            from bench.fusion_study import study

            print(study(data, lists).table(), flush=True)
        if args.lists:
            dump = [
                {"q": q.text, "evidence": sorted(q.evidence), "category": q.category, **pair}
                for q, pair in zip(data.questions, lists, strict=True)
            ]
            path = args.lists.with_name(f"{args.lists.stem}-{data.name}.json")
            path.write_text(json.dumps(dump))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def bench_section(table: Table) -> None:
    """`make bench` section 8: both sets, overall and per category, with the goal's verdict."""
    for data in datasets(["beam", "locomo"], shared_data()):
        signal_rows: list[tuple[str, str]] = []
        results, _, seconds = asyncio.run(
            run_one(data, compare_signals=True, signal_rows=signal_rows)
        )
        print(results.table(), flush=True)
        name = results.dataset
        for label, cells in signal_rows:
            table.add("8 retrieval", f"{name} {label}", cells)
        for k in KS:
            figures = " / ".join(f"{results.recall(m, k):.3f}" for m in MODES)
            table.add("8 retrieval", f"{name} R_any@{k} vector / bm25 / hybrid", figures)
        verdict = "yes" if results.hybrid_beats_components() else "NO"
        table.add(
            "8 retrieval",
            f"{name}: hybrid above both components at k 5 and 10",
            verdict,
            f"goal: yes ({results.count()} questions, {seconds:.0f} s)",
        )
        for category in results.categories():
            cells = "  ".join(
                f"@{k} " + " / ".join(f"{results.recall(m, k, category):.2f}" for m in MODES)
                for k in KS
            )
            table.add("8 retrieval", f"  {name} {category} (n={results.count(category)})", cells)


if __name__ == "__main__":
    main()
