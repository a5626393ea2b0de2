"""`make bench`: every benchmark section, then ONE table of figures.

    python -m bench.run [--quick] [--only 1,2,3,4,5,6] [--workers N] [--keep]

Sections: 1 add acknowledgement latency (HTTP, open loop); 2 pipeline throughput and lag;
3 search latency and HNSW recall at 10k/100k; 4 side by side with mem0; 5 a profile of the
pipeline under load; 6 the distributed mode (Kafka, 1/2/4 replicas) beside the embedded one;
7 memory dynamics (`bench.dynamics`: duplicates, stale facts, thrash, transfer, LLM calls per
add, recall tracking's cost), printed as its own table; 8 retrieval quality (R_any@k) on the
BEAM-128K and LoCoMo dev sets; 9 install size (mnemo's dependency closure in the venv); 10 CLI
speed (`mnemo --help`, `mnemo search --help`, stdio `mnemo mcp` until it answers); 11 an
authenticated search's latency idle and beside 1,000 slow or keyless clients; 12 a soak, 30
minutes of steady load per mode (`bench.soak`; only when asked: `--only 12`, `make soak`). Work files
(server logs, data folders, the profile) go to
bench/results/ (gitignored); the tables are also written there as table.txt and dynamics.txt.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import time
import traceback
from pathlib import Path

from bench.common import ROOT, Table

RESULTS = ROOT / "bench" / "results"


def machine() -> str:
    load = os.getloadavg()
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load avg {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} at start"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="mnemo benchmarks")
    parser.add_argument("--quick", action="store_true", help="short runs (about 5 minutes)")
    parser.add_argument(
        "--only", default="1,2,3,4,5,6,7,8,9,10,11", help="comma-separated sections"
    )
    parser.add_argument("--workers", type=int, default=64, help="MNEMO_WORKERS for sections 2/4")
    parser.add_argument("--keep", action="store_true", help="keep the data folders afterwards")
    args = parser.parse_args(argv)
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    work = RESULTS / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    table = Table()
    table.add("machine", "host", machine())
    started = time.monotonic()
    for number in ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"):
        if number not in sections:
            continue
        began = time.monotonic()
        print(f"== section {number} ==", flush=True)
        try:
            run_section(number, table, work, args)
        except Exception as exc:  # one failing section must not hide the others' figures
            traceback.print_exc()
            table.add(f"{number} (failed)", type(exc).__name__, str(exc)[:100])
        print(f"== section {number} took {time.monotonic() - began:.0f} s ==", flush=True)
    table.add("total", "wall time", f"{time.monotonic() - started:.0f} s", "budget 20 min")
    text = table.render()
    (RESULTS / "table.txt").write_text(text + "\n")
    if not args.keep:
        shutil.rmtree(work / "data", ignore_errors=True)
    print("\n" + text)
    dynamics = RESULTS / "dynamics.txt"
    if "7" in sections and dynamics.exists():
        print("\nMemory dynamics (bench.dynamics)\n" + dynamics.read_text())


def run_section(number: str, table: Table, work: Path, args: argparse.Namespace) -> None:
    from bench.services import fake_llm

    if number == "3":
        from bench import search

        search.run(table, work, args.quick)
        return
    if number == "12":
        from bench import soak

        soak.run(table, work, args.quick)
        return
    if number == "10":
        from bench import cli_speed

        cli_speed.run(table)
        return
    if number == "11":
        from bench import slow_clients

        slow_clients.run(table, work, args.quick)
        return
    if number == "9":
        from bench import install_size

        install_size.run(table)
        return
    if number == "8":
        from bench import retrieval

        retrieval.bench_section(table)
        return
    if number == "4":
        from bench import compare

        compare.run(table, work, args.quick, args.workers)
        return
    if number == "7":
        from bench.dynamics.__main__ import run_section

        run_section(table, RESULTS / "dynamics.txt", args.quick)
        return
    with fake_llm(work, 0.2) as llm:
        if number == "1":
            from bench import add_latency

            add_latency.run(table, work, llm, args.quick, workers=16)
        elif number == "2":
            from bench import pipeline

            pipeline.run(table, work, llm, args.quick, args.workers)
        elif number == "5":
            from bench import profiling

            profiling.run(table, work, llm, args.quick, args.workers)
        elif number == "6":
            from bench import distributed

            distributed.run(table, work, llm, args.quick, args.workers)


if __name__ == "__main__":
    main()
