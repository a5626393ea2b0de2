"""The processes a bench section runs against: the fake LLM and a mnemo server."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.common import free_port, spawn, stop, wait_http


@dataclass
class LLMProc:
    url: str  # the OpenAI base URL, ending in /v1
    port: int

    def stats(self) -> dict[str, int]:
        """LLM calls so far, per prompt."""
        return self.usage()["calls"]

    def usage(self) -> dict[str, dict[str, int]]:
        """Per prompt: `calls`, `prompt_tokens` and `completion_tokens` so far."""
        got = httpx.get(f"http://127.0.0.1:{self.port}/stats").json()
        return {k: got.get(k, {}) for k in ("calls", "prompt_tokens", "completion_tokens")}


@contextlib.contextmanager
def fake_llm(work: Path, delay: float) -> Iterator[LLMProc]:
    port = free_port()
    log = work / "fake_llm.log"
    proc = spawn(["-m", "bench.fake_llm", "--port", str(port), "--delay", str(delay)], log)
    try:
        wait_http(f"http://127.0.0.1:{port}/stats", proc, 30, log)
        yield LLMProc(url=f"http://127.0.0.1:{port}/v1", port=port)
    finally:
        stop(proc)


# The benches push one project far past what an agent does, on purpose: its per-project
# add rate and open-run quota (on by default) would only measure themselves.
UNLIMITED = {"MNEMO_PROJECT_ADDS_PER_SECOND": "0", "MNEMO_PROJECT_MAX_OPEN_RUNS": "0"}


@dataclass
class Server:
    url: str
    port: int
    key: str
    data_dir: Path
    workers: int
    pid: int = 0  # the server process (its worker processes are its children)


@contextlib.contextmanager
def mnemo_server(
    work: Path,
    name: str,
    llm: LLMProc | None,
    workers: int,
    max_connections: int = 400,
    extra_env: dict[str, str] | None = None,
) -> Iterator[Server]:
    """`mnemo serve` equivalent (bench.serve_proc) on loopback with embedded Postgres."""
    port = free_port()
    data_dir = work / "data" / name
    key_file = work / f"{name}.key"
    key_file.unlink(missing_ok=True)
    log = work / f"{name}.log"
    env = {"MNEMO_WORKERS": str(workers), **UNLIMITED, **(extra_env or {})}
    if llm is not None:
        env.update(MNEMO_LLM_BASE_URL=llm.url, MNEMO_LLM_API_KEY="bench", MNEMO_LLM_MODEL="fake")
    if not (data_dir / "pg" / "PG_VERSION").exists():
        prepare_postgres(data_dir, max_connections)
    args = ["-m", "bench.serve_proc", "--port", str(port), "--data-dir", str(data_dir)]
    proc = spawn([*args, "--key-file", str(key_file)], log, **env)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, 600, log)  # a loaded machine
        deadline = time.monotonic() + 30
        while not key_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        yield Server(
            url=f"http://127.0.0.1:{port}",
            port=port,
            key=key_file.read_text().strip(),
            data_dir=data_dir,
            workers=workers,
            pid=proc.pid,
        )
    finally:
        stop(proc, timeout=60)


def prepare_postgres(data_dir: Path, max_connections: int) -> None:
    """Initialise the embedded Postgres with room for many workers.

    pgserver's initdb default is max_connections = 100, and each pipeline worker can hold two
    connections (its claim transaction plus a lookup), so MNEMO_WORKERS above ~40 fails with
    "too many clients" on the stock embedded database.
    """
    from mnemo.store.database import embedded_server

    pg_dir = data_dir / "pg"
    pg_dir.mkdir(parents=True, exist_ok=True)
    server = embedded_server(pg_dir)
    server.psql(f"ALTER SYSTEM SET max_connections = {int(max_connections)};")
    server.cleanup()


def postgres_url(data_dir: Path) -> tuple[Any, str]:
    """Join the embedded Postgres of a running server (pgserver handle, psycopg URL)."""
    from mnemo.store.database import embedded_server

    server = embedded_server(data_dir / "pg")
    return server, server.get_uri()


def conversation_add(user: str, text: str) -> dict[str, Any]:
    return {
        "user_id": user,
        "input": {"conversation": {"messages": [{"role": "user", "content": text}]}},
    }
