"""Section 12: a soak. Steady load for a long time in each mode, watched over time.

    python -m bench.soak [--minutes 30] [--rate 5] [--modes embedded,distributed]
    python -m bench.run --only 12        (`make soak`; not in the default sections)

Adds arrive open-loop at `--rate` per second (conversation adds over 200 users, each going
extract -> reconcile -> commit against the fake LLM answering in 200 ms). Every `--every`
seconds a sample is taken of: runs committed per second since the last sample; p99 from add
to commit of those runs (server clock, from the runs table); the memory (PSS) and open files of every
process under test (the server and its workers, or the gateway and each stage; Postgres; the
broker); the database's connections; and the backlog (runs not yet terminal).

It writes bench/results/soak-<mode>.csv, a picture (soak-<mode>.svg, `bench.soak_svg`) and a
verdict on growth: a quantity whose last third stands above its first third by more than
the noise (see `growth`) is a finding to fix, not a figure to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import random
import statistics
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil
import psycopg

from bench.common import Table, pct, sentence
from bench.loadgen import HttpPool
from bench.services import LLMProc, Server, conversation_add, fake_llm, mnemo_server
from bench.soak_svg import write_svg

SECTION = "12 soak"
USERS = 200
_DONE = """
    SELECT extract(epoch FROM created_at), extract(epoch FROM updated_at) FROM runs
    WHERE status = 'completed' AND updated_at > to_timestamp(%s) AND updated_at <= to_timestamp(%s)
"""
_BACKLOG = "SELECT count(*) FROM runs WHERE status IN ('running', 'in_buffer')"
_CONNECTIONS = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"


@dataclass
class Sample:
    minute: float
    runs_per_s: float
    p99_s: float
    backlog: int
    connections: int
    rss_mb: dict[str, float] = field(default_factory=dict)
    open_files: dict[str, int] = field(default_factory=dict)
    refused: int = 0


def _tree(pids: list[int]) -> list[psutil.Process]:
    found = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            found += [root, *root.children(recursive=True)]
    return found


def resources(parts: dict[str, list[int]]) -> tuple[dict[str, float], dict[str, int]]:
    """Memory (MB) and open files of each part's process trees. Memory is the proportional
    set size: Postgres backends share its buffers, and summing their RSS would count the
    shared pages once per backend that touched them, which grows without any leak."""
    rss: dict[str, float] = {}
    files: dict[str, int] = {}
    for name, pids in parts.items():
        total, fds = 0, 0
        for proc in _tree(pids):
            with contextlib.suppress(psutil.Error):
                total += proc.memory_full_info().pss
                fds += proc.num_fds()
        rss[name], files[name] = total / 2**20, fds
    return rss, files


async def steady_load(server: Server, rate: float, seconds: float, refused: list[int]) -> None:
    """Open loop: one add every 1/rate s, whatever the answers take."""
    pool = HttpPool("127.0.0.1", server.port, {"Authorization": f"Bearer {server.key}"}, 64)
    rng, tasks = random.Random(7), set()
    started = time.monotonic()

    async def one(i: int) -> None:
        status, _ = await pool.post("/v1/memories", conversation_add(f"soak-{i % USERS}",
                                                                      sentence(rng, i)))  # fmt: skip
        if status >= 300:
            refused[0] += 1

    i = 0
    while (elapsed := time.monotonic() - started) < seconds:
        task = asyncio.create_task(one(i))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        i += 1
        await asyncio.sleep(max(0.0, i / rate - elapsed))
    await asyncio.gather(*tasks, return_exceptions=True)
    await pool.close()


async def watch(url: str, parts: dict[str, list[int]], seconds: float, every: float,
                refused: list[int]) -> list[Sample]:  # fmt: skip
    samples: list[Sample] = []
    started = last = time.time()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while time.time() - started < seconds:
            await asyncio.sleep(every)
            now = time.time()
            rows = await (await conn.execute(_DONE, (last, now))).fetchall()
            lags = [float(u) - float(c) for c, u in rows]
            backlog = (await (await conn.execute(_BACKLOG)).fetchone() or (0,))[0]
            connections = (await (await conn.execute(_CONNECTIONS)).fetchone() or (0,))[0]
            rss, files = resources(parts)
            samples.append(Sample(
                minute=(now - started) / 60, runs_per_s=len(rows) / (now - last),
                p99_s=pct(lags, 0.99) if lags else 0.0, backlog=int(backlog),
                connections=int(connections), rss_mb=rss, open_files=files, refused=refused[0],
            ))  # fmt: skip
            last = now
    return samples


def growth(values: list[float]) -> tuple[float, bool]:
    """(last third's median minus the first third's, whether that is beyond noise: more
    than 3 median absolute deviations of the first third and more than 10 % of its median;
    the first minute, the warm-up, is not counted)."""
    values = values[len(values) // 10 :]
    if len(values) < 6:
        return 0.0, False
    third = len(values) // 3
    first, last = values[:third], values[-third:]
    base = statistics.median(first)
    mad = statistics.median([abs(v - base) for v in first])
    delta = statistics.median(last) - base
    return delta, delta > 3 * mad and delta > 0.1 * abs(base) and delta > 1


def series(samples: list[Sample]) -> dict[str, list[float]]:
    """Every quantity watched, by name, over the samples."""
    out: dict[str, list[float]] = {
        "runs/s": [s.runs_per_s for s in samples],
        "p99 add->commit (s)": [s.p99_s for s in samples],
        "backlog (runs)": [float(s.backlog) for s in samples],
        "db connections": [float(s.connections) for s in samples],
    }
    for name in samples[0].rss_mb if samples else []:
        out[f"memory {name} (MB, PSS)"] = [s.rss_mb[name] for s in samples]
        out[f"open files {name}"] = [float(s.open_files[name]) for s in samples]
    return out


def write_csv(path: Path, samples: list[Sample]) -> None:
    with path.open("w", newline="") as out:
        rows = [{k: v for k, v in asdict(s).items() if not isinstance(v, dict)}
                | {f"rss_mb.{k}": round(v, 1) for k, v in s.rss_mb.items()}
                | {f"open_files.{k}": v for k, v in s.open_files.items()} for s in samples]  # fmt: skip
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def soak(server: Server, url: str, parts: dict[str, list[int]], minutes: float, rate: float,
         every: float) -> list[Sample]:  # fmt: skip
    refused = [0]

    async def both() -> list[Sample]:
        load = asyncio.create_task(steady_load(server, rate, minutes * 60, refused))
        samples = await watch(url, parts, minutes * 60, every, refused)
        await load
        return samples

    return asyncio.run(both())


@contextlib.contextmanager
def stack(
    mode: str, work: Path, llm: LLMProc
) -> Iterator[tuple[Server, str, dict[str, list[int]]]]:
    from bench.cpu import postmaster_pid
    from bench.services import postgres_url

    if mode == "embedded":
        with mnemo_server(work, "soak-embedded", llm, 16) as server:
            handle, url = postgres_url(server.data_dir)
            try:
                pg = postmaster_pid(server.data_dir / "pg") or 0
                yield server, url, {"server": [server.pid], "postgres": [pg]}
            finally:
                handle.cleanup()
        return
    from bench.distributed import distributed, kafka_broker, postgres

    with kafka_broker(work) as (bootstrap, broker), postgres(work) as (pg_handle, pg_pid):
        with distributed(work, llm, bootstrap, pg_handle, 1, 16) as (server, url, parts):
            yield server, url, {**parts, "postgres": [pg_pid], "broker": [broker]}


def run_mode(table: Table, mode: str, work: Path, llm: LLMProc, minutes: float, rate: float,
             every: float, results: Path) -> None:  # fmt: skip
    with stack(mode, work, llm) as (server, url, parts):
        samples = soak(server, url, parts, minutes, rate, every)
    write_csv(results / f"soak-{mode}.csv", samples)
    named = series(samples)
    findings = [name for name, values in named.items()
                if not name.startswith(("runs/s", "p99")) and growth(values)[1]]  # fmt: skip
    write_svg(results / f"soak-{mode}.svg", f"mnemo soak, {mode} mode", samples[-1].minute, named)
    rates, lags = named["runs/s"], named["p99 add->commit (s)"]
    table.add(SECTION, f"{mode}: runs/s", f"median {statistics.median(rates):.2f}, "
              f"min {min(rates):.2f} (offered {rate}/s, {samples[-1].refused} refused)")  # fmt: skip
    table.add(SECTION, f"{mode}: p99 add->commit", f"median {statistics.median(lags):.2f} s, "
              f"max {max(lags):.2f} s")  # fmt: skip
    for name, values in named.items():
        if name.startswith(("memory", "open files", "db", "backlog")):
            delta, grew = growth(values)
            table.add(SECTION, f"{mode}: {name}", f"{values[0]:.0f} -> {values[-1]:.0f}",
                      f"last third vs first: {delta:+.1f}{' GROWS' if grew else ''}")  # fmt: skip
    table.add(SECTION, f"{mode}: growth beyond noise", ", ".join(findings) or "none")


def run(table: Table, work: Path, quick: bool, minutes: float | None = None,
        rate: float = 5.0, modes: tuple[str, ...] = ("embedded", "distributed"),
        every: float = 10.0) -> None:  # fmt: skip
    minutes = minutes if minutes is not None else (3.0 if quick else 30.0)
    results = work.parent
    table.add(SECTION, "setup", f"{minutes:g} min per mode, {rate:g} adds/s over {USERS} users, "
              f"fake LLM 200 ms/call, sampled every {every:g} s")  # fmt: skip
    with fake_llm(work, 0.2) as llm:
        for mode in modes:
            run_mode(table, mode, work, llm, minutes, rate, every, results)


def main() -> None:
    from bench.run import RESULTS, machine

    parser = argparse.ArgumentParser(description="mnemo soak")
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=5.0, help="adds per second")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--modes", default="embedded,distributed")
    args = parser.parse_args()
    work = RESULTS / "work"
    work.mkdir(parents=True, exist_ok=True)
    table = Table()
    table.add("machine", "host", machine())
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    run(table, work, False, args.minutes, args.rate, modes, args.every)
    text = table.render()
    (RESULTS / "soak.txt").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
