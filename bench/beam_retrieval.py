"""BEAM-128K retrieval check (no LLM): R_any@k of vector, bm25 and hybrid search.

Each chat message is stored, with its id, as one memory of one user per chat (through the
real pipeline: pre_extracted adds straight to commit). Each probing question is searched in
its chat's user; a hit is a top-k result whose message id is in the question's evidence ids.
Cite: Tavakoli et al., "Beyond a Million Tokens: Benchmarking and Enhancing Long-Term Memory
in LLMs". Usage: python -m bench.beam_retrieval [--data ../shared/data/beam-128k] [--chats N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from mnemo.core.engine import Engine
from mnemo.domain.requests import AddRequest, SearchRequest
from mnemo.engine.embedded import start_engine
from mnemo.settings import Settings

MODES = ("vector", "bm25", "hybrid")
DEPTH = 40  # results fetched per mode (fusion candidates)
KS = (5, 10)
_MARKER = re.compile(r"\s*->->\s*\d+,\d+\s*$")


def messages(chat_dir: Path) -> list[dict[str, Any]]:
    out = []
    for batch in json.loads((chat_dir / "chat.json").read_text()):
        for turn in batch["turns"]:
            out.extend(turn)
    return out


def evidence_ids(question: dict[str, Any]) -> set[int]:
    refs = question.get("source_chat_ids")
    if refs is None:
        return set()
    ids: set[int] = set()
    stack: list[Any] = [refs]
    while stack:  # ints, lists of ints, dicts of lists, and nestings of those
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            ids.add(int(item))
    return ids


# A memory records only the properties its topic is scoped by, so the message id that a hit is
# judged by is a scope property here (searches omit it, so they see every message).
BEAM_GROUP: dict[str, object] = {
    "topics": [
        {
            "name": "UserKnowledge",
            "description": "One message of the chat.",
            "scoping": {"user_scoped": True, "scope_properties": ["message_id"]},
        }
    ],
    "pipeline": {
        "steps": [
            {
                "id": "pre_extracted",
                "kind": "extract",
                "input_type": "pre_extracted",
                "next": "commit",
            },
            {"id": "commit", "kind": "commit"},
        ]
    },
}


async def load_chat(engine: Engine, project: str, user: str, chat_dir: Path) -> int:
    await engine.put_group(project, "default", BEAM_GROUP)
    runs = []
    for message in messages(chat_dir):
        content = _MARKER.sub("", message["content"]).strip()
        if not content:
            continue
        request = AddRequest.model_validate(
            {
                "user_id": user,
                "root": "commit",
                "properties": {"message_id": str(message["id"])},
                "input": {
                    "pre_extracted": {"items": [{"topic": "UserKnowledge", "content": content}]}
                },
            }
        )
        runs.append((await engine.add(project, request)).run_id)
    for run_id in runs:
        await engine.wait_run(project, run_id, 600)
    return len(runs)


async def evaluate(
    engine: Engine,
    project: str,
    user: str,
    chat_dir: Path,
    hits: dict[tuple[str, str, int], list[int]],
    study: bool = False,
) -> None:
    questions = json.loads((chat_dir / "probing_questions.json").read_text())
    for ability, items in questions.items():
        for question in items:
            wanted = evidence_ids(question)
            if not wanted:
                continue
            ranked: dict[str, list[tuple[int, float]]] = {}
            for mode in MODES:
                request = {
                    "query": question["question"],
                    "user_id": user,
                    "retrieval_config": {"retrieval_type": mode, "limit": DEPTH},
                }
                found = await engine.search(project, SearchRequest.model_validate(request))
                ranked[mode] = [
                    (int((m.properties or {}).get("message_id", -1)), m.score or 0.0) for m in found
                ]
            if study:
                ranked.update(fusion_variants(ranked["vector"], ranked["bm25"]))
            for mode, pairs in ranked.items():
                ids = [i for i, _ in pairs]
                for k in KS:
                    hits[(mode, ability, k)].append(int(bool(wanted & set(ids[:k]))))


Ranked = list[tuple[int, float]]


def _rsf(lists: list[Ranked], weights: list[float]) -> Ranked:
    """Relative score fusion: min-max normalise each list, then a weighted sum."""
    fused: dict[int, float] = {}
    for pairs, weight in zip(lists, weights, strict=True):
        if not pairs:
            continue
        scores = [s for _, s in pairs]
        low, high = min(scores), max(scores)
        for i, s in pairs:
            norm = (s - low) / (high - low) if high > low else 1.0
            fused[i] = fused.get(i, 0.0) + weight * norm
    return sorted(fused.items(), key=lambda kv: kv[1], reverse=True)


def _rrf(lists: list[Ranked], weights: list[float], k: int = 60) -> Ranked:
    fused: dict[int, float] = {}
    for pairs, weight in zip(lists, weights, strict=True):
        for rank, (i, _) in enumerate(pairs):
            fused[i] = fused.get(i, 0.0) + weight / (k + rank + 1)
    return sorted(fused.items(), key=lambda kv: kv[1], reverse=True)


def fusion_variants(vector: Ranked, bm25: Ranked) -> dict[str, Ranked]:
    """Candidate fusions, for tuning the product's hybrid (`--fusion-study`)."""
    both = [vector, bm25]
    return {
        "rrf50": _rrf(both, [0.5, 0.5]),
        "rrf70": _rrf(both, [0.7, 0.3]),
        "rsf50": _rsf(both, [0.5, 0.5]),
        "rsf65": _rsf(both, [0.65, 0.35]),
        "rsf75": _rsf(both, [0.75, 0.25]),
        "rsf85": _rsf(both, [0.85, 0.15]),
    }


def report(hits: dict[tuple[str, str, int], list[int]]) -> str:
    abilities = sorted({a for _, a, _ in hits})
    modes = list(dict.fromkeys(m for m, _, _ in hits))
    header = f"{'ability':<26}" + "".join(f"{m + '@' + str(k):>11}" for m in modes for k in KS)
    lines = [header]
    for ability in [*abilities, "overall"]:
        row = f"{ability:<26}"
        for mode in modes:
            for k in KS:
                values = [
                    v
                    for (m, a, kk), vs in hits.items()
                    if m == mode and kk == k and (ability == "overall" or a == ability)
                    for v in vs
                ]
                row += f"{sum(values) / max(1, len(values)):>11.3f}"
        lines.append(row)
    return "\n".join(lines)


async def main(
    data: Path, chats: int, database_url: str | None, study: bool, reuse: Path | None
) -> None:
    data_dir = reuse or Path(tempfile.mkdtemp(prefix="mnemo-beam-"))
    engine = await start_engine(Settings(database_url=database_url, data_dir=data_dir, workers=4))
    hits: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    try:
        started = time.perf_counter()
        chat_dirs = sorted((p for p in data.iterdir() if p.is_dir()), key=lambda p: int(p.name))  # noqa: ASYNC240
        for chat_dir in chat_dirs[:chats]:
            user = f"beam-{chat_dir.name}"
            stored = 0 if reuse else await load_chat(engine, "beam", user, chat_dir)
            await evaluate(engine, "beam", user, chat_dir, hits, study)
            print(
                f"chat {chat_dir.name}: {stored} messages ({time.perf_counter() - started:.0f}s)",
                flush=True,
            )
        print(report(hits))
    finally:
        await engine.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/beam-128k"))
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--fusion-study", action="store_true", help="also score fusion variants")
    parser.add_argument(
        "--reuse",
        type=Path,
        default=None,
        help="data dir of an earlier run: search its memories, load nothing",
    )
    args = parser.parse_args()
    asyncio.run(main(args.data, args.chats, args.database_url, args.fusion_study, args.reuse))
