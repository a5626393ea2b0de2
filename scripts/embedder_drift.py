"""Measure how far the local embedder's vectors move between CPU kernels.

onnxruntime picks its int8 matrix kernels by CPU (AVX-512 VNNI, AVX2, SSE4.1, ARM...), and
they round differently, so one text gets slightly different vectors on different machines.
This script writes what this machine computes, and compares such files:

    python scripts/embedder_drift.py dump /tmp/here.json
    qemu-x86_64 -cpu Nehalem .venv/bin/python scripts/embedder_drift.py dump /tmp/sse4.json qemu-Nehalem
    python scripts/embedder_drift.py compare /tmp/here.json /tmp/sse4.json ...

`dump` embeds the reference texts of tests/integration/bge_reference.json and the ranking
set of tests/integration/bge_ranking.json; `compare` prints, over every pair of files, the
lowest cosine of a text's two vectors and the largest change of a query-memory score.
`ranking OUT` writes bge_ranking.json's scores from this machine. The figures and the
tolerance chosen from them are in tests/integration/test_local_embedder.py.
"""

from __future__ import annotations

import itertools
import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

from mnemo.embeddings import local

HERE = Path(__file__).resolve().parent.parent / "tests" / "integration"
REFERENCE = json.loads((HERE / "bge_reference.json").read_text())
RANKING = json.loads((HERE / "bge_ranking.json").read_text())


def cpu_flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return [platform.machine()]
    flags = next(line for line in text.splitlines() if line.startswith("flags")).split()
    return sorted(f for f in flags if f.startswith(("avx", "sse4", "fma", "amx")))


def texts() -> dict[str, str]:
    """Every text to embed, by key: the query instruction is part of a query's text."""
    out = {f"passage:{t['text']}": t["text"] for t in REFERENCE["passages"]}
    out |= {f"query:{t['text']}": local.QUERY_INSTRUCTION + t["text"] for t in REFERENCE["queries"]}
    out |= {f"memory:{t}": t for t in RANKING["memories"]}
    out |= {f"query:{q['query']}": local.QUERY_INSTRUCTION + q["query"] for q in RANKING["queries"]}
    return out


def dump(out: Path, label: str | None) -> None:
    model = local.load_local_model()
    keyed = texts()
    vectors = model.encode(list(keyed.values()))
    data = {
        "onnxruntime": version("onnxruntime"),
        "machine": platform.machine(),
        # under qemu-user /proc/cpuinfo shows the host's: name the emulated CPU instead
        "cpu_flags": [label] if label else cpu_flags(),
        "vectors": {k: v.tolist() for k, v in zip(keyed, vectors, strict=True)},
    }
    out.write_text(json.dumps(data))
    print(f"wrote {out} (onnxruntime {data['onnxruntime']}, {' '.join(data['cpu_flags'])})")


def scores(vectors: dict[str, list[float]]) -> dict[tuple[str, str], float]:
    return {
        (q["query"], m): float(np.dot(vectors[f"query:{q['query']}"], vectors[f"memory:{m}"]))
        for q in RANKING["queries"]
        for m in RANKING["memories"]
    }


def compare(paths: list[Path]) -> None:
    runs = [json.loads(p.read_text()) for p in paths]
    for (pa, a), (pb, b) in itertools.combinations(zip(paths, runs, strict=True), 2):
        cos = {k: float(np.dot(a["vectors"][k], b["vectors"][k])) for k in a["vectors"]}
        worst = min(cos, key=cos.__getitem__)
        sa, sb = scores(a["vectors"]), scores(b["vectors"])
        moved = max(abs(sa[k] - sb[k]) for k in sa)
        print(
            f"{pa.name} vs {pb.name}: lowest cosine {cos[worst]:.5f} ({worst[:40]!r}), "
            f"largest score change {moved:.5f}"
        )


def ranking(out: Path) -> None:
    """Store this machine's query-memory scores beside the ranking set."""
    model = local.load_local_model()
    keyed = texts()
    vectors = dict(zip(keyed, model.encode(list(keyed.values())).tolist(), strict=True))
    data = dict(RANKING)
    data["computed_with"] = {"onnxruntime": version("onnxruntime"), "cpu_flags": cpu_flags()}
    data["scores"] = {
        q: {m: round(s, 6) for (qq, m), s in scores(vectors).items() if qq == q}
        for q in (q["query"] for q in RANKING["queries"])
    }
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "dump":
        dump(Path(args[0]), args[1] if len(args) > 1 else None)
    elif command == "ranking":
        ranking(Path(args[0]))
    else:
        compare([Path(a) for a in args])
