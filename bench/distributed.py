"""Section 6: the distributed mode beside the embedded one, on this machine.

The same burst as section 2's 200 scopes goes to (a) the embedded server (bench.serve_proc)
and (b) the distributed mode: a Kafka broker (deploy/kafka), the gateway and the stage
services as separate processes, with 1, 2 and 4 replicas of the LLM-bound stages (the
extractor, and the committer, which runs transform_with_context before the commit). Every
add goes extract (LLM) -> reconcile (LLM once the scope has related memories) -> commit
against the fake LLM answering after 200 ms, with local embeddings.
Throughput = runs / (last commit - first add), from the runs table. CPU = the CPU time the
processes under test burnt over the burst (server or gateway and stages, Postgres, and the
broker), from /proc, so other work on the machine does not count: shown as cores busy and
core-milliseconds per run.
Run alone: `python -m bench.run --only 6` (`make bench-distributed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, Table, child_env, free_port, spawn, stop, wait_http
from bench.cpu import postmaster_pid, tree_cpu_seconds
from bench.pipeline import burst, drain
from bench.services import (
    UNLIMITED,
    LLMProc,
    Server,
    mnemo_server,
    postgres_url,
    prepare_postgres,
)
from mnemo.settings import default_worker_processes

SECTION = "6 distributed"
SCOPES = 200
PARTITIONS = 8
REPLICAS = (1, 2, 4)
LLM_BOUND = ("extractor", "committer")
KAFKA_SH = ROOT / "deploy" / "kafka" / "kafka.sh"
# How long the gateway and each stage may take to answer /healthz (model and database loaded,
# group joined): a stack of six processes took 9 minutes to start at load average 20.
READY_SECONDS = 1500.0


@dataclass
class Measured:
    runs: int
    failed: int
    rate: float
    cores: float
    core_ms_per_run: float
    by_part: dict[str, float]  # core-ms per run of each part (server, broker, ...)


def measure(server: Server, runs: int, database_url: str, parts: dict[str, list[int]]) -> Measured:
    """Burst `runs` adds over SCOPES users, wait until all are terminal; the CPU of each
    part's process trees (`parts`: name -> root pids) over the burst."""
    before = {name: tree_cpu_seconds(pids) for name, pids in parts.items()}
    started = time.monotonic()
    asyncio.run(burst(server, SCOPES, runs))
    rows, failed = drain(database_url, runs, timeout=max(180.0, runs / 3))
    wall = time.monotonic() - started
    spent = {name: tree_cpu_seconds(pids) - before[name] for name, pids in parts.items()}
    cpu, done = sum(spent.values()), max(1, len(rows))
    first = min((added for added, _ in rows), default=0.0)
    last = max((committed for _, committed in rows), default=0.0)
    rate = len(rows) / (last - first) if last > first else 0.0
    by_part = {name: 1000 * seconds / done for name, seconds in spent.items()}
    return Measured(len(rows), failed, rate, cpu / wall, 1000 * cpu / done, by_part)


@contextlib.contextmanager
def kafka_broker(work: Path) -> Iterator[tuple[str, int]]:
    """A broker of our own (deploy/kafka/kafka.sh) on a free port: (bootstrap, pid)."""
    port, data = free_port(), work / "kafka"
    env = child_env(
        KAFKA_PORT=str(port), KAFKA_DATA_DIR=str(data), PYTHON=sys.executable,
        KAFKA_READY_TIMEOUT="300",
    )  # fmt: skip
    run = ["bash", str(KAFKA_SH)]
    subprocess.run([*run, "up"], env=env, check=True, timeout=300, capture_output=True)
    try:
        yield f"127.0.0.1:{port}", int((data / "kafka.pid").read_text().strip())
    finally:
        subprocess.run([*run, "down"], env=env, timeout=120, capture_output=True)


@contextlib.contextmanager
def postgres(work: Path) -> Iterator[tuple[object, int]]:
    """One embedded Postgres for the distributed runs (a database per run): (handle, pid)."""
    from mnemo.store.database import embedded_server

    pg_dir = work / "data" / "distributed" / "pg"
    if not (pg_dir / "PG_VERSION").exists():
        prepare_postgres(pg_dir.parent, 500)
    server = embedded_server(pg_dir)
    try:
        yield server, postmaster_pid(pg_dir) or 0
    finally:
        server.cleanup()


@contextlib.contextmanager
def distributed(
    work: Path, llm: LLMProc, bootstrap: str, pg: object, replicas: int, concurrency: int
) -> Iterator[tuple[Server, str, dict[str, list[int]]]]:
    """Gateway + stages, ready (each answers /healthz): (server, database URL, pids)."""
    name = f"dist{replicas}"
    pg.psql(f"CREATE DATABASE {name};")  # type: ignore[attr-defined]
    url = pg.get_uri().replace("/postgres?", f"/{name}?")  # type: ignore[attr-defined]
    env = {
        **UNLIMITED,
        "MNEMO_DATABASE_URL": url,
        "MNEMO_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "MNEMO_KAFKA_TOPIC_PREFIX": f"bench-{name}-{int(time.time())}",
        "MNEMO_KAFKA_PARTITIONS": str(PARTITIONS),
        "MNEMO_KAFKA_CONCURRENCY": str(concurrency),
        "MNEMO_KAFKA_STATE_DIR": str(work / "faust" / name),
        "MNEMO_LLM_BASE_URL": llm.url,
        "MNEMO_LLM_API_KEY": "bench",
        "MNEMO_LLM_MODEL": "fake",
    }
    port, procs = free_port(), []
    try:
        log = work / f"{name}-gateway.log"
        gateway_env = {**env, "MNEMO_MODE": "distributed", "MNEMO_PORT": str(port)}
        procs.append(spawn(["-m", "services.gateway"], log, **gateway_env,
                           MNEMO_AUTH_DISABLED="true"))  # fmt: skip
        wait_http(f"http://127.0.0.1:{port}/healthz", procs[-1], READY_SECONDS, log)
        stages = [(s, replicas if s in LLM_BOUND else 1) for s in
                  ("extractor", "buffer", "transformer", "committer")]  # fmt: skip
        health = []
        for stage, count in stages:
            for i in range(count):
                metrics_port, log = free_port(), work / f"{name}-{stage}-{i}.log"
                procs.append(spawn(["-m", f"services.{stage}"], log, **env,
                                   MNEMO_METRICS_PORT=str(metrics_port)))  # fmt: skip
                health.append((f"http://127.0.0.1:{metrics_port}/healthz", procs[-1], log))
        for url_, proc, log in health:
            wait_http(url_, proc, READY_SECONDS, log)
        server = Server(f"http://127.0.0.1:{port}", port, "none", work, concurrency)
        names = ["gateway", *(s for s, count in stages for _ in range(count))]
        by_name: dict[str, list[int]] = {}
        for name, proc in zip(names, procs, strict=True):
            by_name.setdefault(name, []).append(proc.pid)
        yield server, url, by_name
    finally:
        for proc in procs:
            stop(proc, timeout=60)


def run(table: Table, work: Path, llm: LLMProc, quick: bool, workers: int) -> None:
    runs = 500 if quick else 1500
    table.add(SECTION, "setup", f"{SCOPES} scopes, {runs} runs, fake LLM 200 ms/call, "
              f"{PARTITIONS} partitions, {workers} in flight per process")  # fmt: skip
    # Not niced, like the stage services: both modes get the same share of a busy machine.
    plain = {"MNEMO_WORKER_NICE": "0"}
    with mnemo_server(work, "dist-embedded", llm, workers, extra_env=plain) as server:
        parts = {"server": [server.pid], "postgres": [postmaster_pid(server.data_dir / "pg") or 0]}
        handle, url = postgres_url(server.data_dir)
        try:
            result = measure(server, runs, url, parts)
        finally:
            handle.cleanup()
    processes = os.environ.get("MNEMO_WORKER_PROCESSES") or str(default_worker_processes())
    report(table, f"embedded ({processes} worker processes)", result)
    with kafka_broker(work) as (bootstrap, broker_pid), postgres(work) as (pg, pg_pid):
        for replicas in REPLICAS:
            label = f"distributed, {replicas} extractor + {replicas} committer"
            try:  # a stack that fails to start must not hide the other replica counts
                with distributed(work, llm, bootstrap, pg, replicas, workers) as (srv, url, parts):
                    parts = {**parts, "broker": [broker_pid], "postgres": [pg_pid]}
                    result = measure(srv, runs, url, parts)
            except RuntimeError as exc:
                table.add(SECTION, f"{label}: failed", str(exc)[:100])
                continue
            report(table, label, result)


def report(table: Table, label: str, m: Measured) -> None:
    table.add(
        SECTION,
        f"{label}: runs/s",
        f"{m.rate:.1f} runs/s ({m.runs} runs, {m.failed} failed)",
        f"CPU {m.cores:.2f} cores busy, {m.core_ms_per_run:.0f} core-ms/run",
    )
    parts = ", ".join(f"{name} {ms:.0f}" for name, ms in m.by_part.items())
    table.add(SECTION, f"{label}: core-ms/run by part", parts)
