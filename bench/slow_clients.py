"""Section 11: an authenticated search's latency, idle and while 1,000 slow or keyless
clients hold connections to the same server (loopback only).

One server (bench.serve_proc: embedded Postgres, the local embedder, default settings but
the per-project limits) holds a few hundred memories of one user. Searches run one at a
time, each with a distinct query (each pays for its query embedding), first with nothing
else going on, then while a separate process (`python -m bench.slow_clients`, bounded in
clients and seconds) keeps 1,000 hostile connections open, reconnecting whenever the server
ends one:
- a third send a request head a line per second (the head deadline and the cap on
  connections still sending a head end them);
- a third announce a 929 KB body without a key and send it a KB per second (refused with
  401 from the head alone, the connection closed);
- a third connect and send nothing.
Target (issue 33): loaded median under 2x the idle median. The attacking process runs at
nice 10: on loopback it shares the server's cores, which a remote attacker would not.
Usage (the hostile side alone): python -m bench.slow_clients --port P --clients N --seconds S
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.common import ROOT, Table, child_env, ms, pct
from bench.services import mnemo_server

SECTION = "10 slow clients"
USER = "bench-user"
HOSTILE_NICE = 10
TOPICS = ("travel", "food", "work", "family", "health", "music", "sport", "books")


# -- the hostile side (its own process) -------------------------------------------------


async def _slow_head(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"POST /v1/memories/search HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    line = 0
    while not await _answered(reader):
        line += 1
        writer.write(f"X-Slow-{line}: {'y' * 20}\r\n".encode())


async def _keyless_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(
        b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 929000\r\n\r\n"
    )
    while not await _answered(reader):
        writer.write(b'{"x": "' + b"z" * 1000)


async def _idle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while not await _answered(reader):
        pass


async def _answered(reader: asyncio.StreamReader) -> bool:
    """Wait up to a second (the pace of a slow client) for the server's answer or close."""
    try:
        data = await asyncio.wait_for(reader.read(4096), 1.0)
    except TimeoutError:
        return False
    _answers[data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "closed"] += 1
    return True


_answers: Counter[str] = Counter()


async def _client(kind: int, port: int, until: float, opened: list[int]) -> None:
    behaviours = (_slow_head, _keyless_body, _idle)
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.5)
            continue
        opened[0] += 1
        try:
            await asyncio.wait_for(
                behaviours[kind % 3](reader, writer), max(0.1, until - time.monotonic())
            )
        except (OSError, TimeoutError):
            pass
        finally:
            writer.close()


async def hostile(port: int, clients: int, seconds: float) -> dict[str, object]:
    until = time.monotonic() + seconds
    opened = [0]
    await asyncio.gather(*(_client(i, port, until, opened) for i in range(clients)))
    return {"clients": clients, "connections_opened": opened[0], "answers": dict(_answers)}


# -- the measuring side -----------------------------------------------------------------


def _seed(client: httpx.Client, memories: int) -> None:
    runs = []
    for start in range(0, memories, 20):
        items = [
            {
                "content": f"fact {i}: {USER} mentioned {TOPICS[i % 8]} item {i}",
                "topic": "UserKnowledge",
            }
            for i in range(start, min(start + 20, memories))
        ]
        added = client.post(
            "/v1/memories", json={"user_id": USER, "input": {"pre_extracted": {"items": items}}}
        )
        added.raise_for_status()
        runs.append(added.json()["run_id"])
    for run_id in runs:
        client.get(f"/v1/runs/{run_id}", params={"wait": 60}).raise_for_status()


def _searches(client: httpx.Client, count: int, offset: int) -> list[float]:
    latencies = []
    for i in range(offset, offset + count):
        body = {"query": f"what about {TOPICS[i % 8]} number {i}?", "user_id": USER}
        started = time.perf_counter()
        found = client.post("/v1/memories/search", json=body)
        latencies.append(time.perf_counter() - started)
        assert found.status_code == 200, found.text[:300]
    return latencies


def run(table: Table, work: Path, quick: bool) -> None:
    clients = 1000
    searches = 30 if quick else 100
    seconds = 20.0 if quick else 45.0
    with mnemo_server(work, "slow-clients", None, 4) as server:
        headers = {"Authorization": f"Bearer {server.key}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
            _seed(client, 200)
            _searches(client, 10, 10_000)  # warm the model, caches and the connection
            idle = _searches(client, searches, 0)
            command = [sys.executable, "-m", "bench.slow_clients", "--port", str(server.port)]
            command += ["--clients", str(clients), "--seconds", str(seconds)]
            hostile_proc = subprocess.Popen(
                command,
                # On loopback the attackers share the server's cores; niced, they take CPU
                # the server leaves (a real attacker's CPU is elsewhere), but never stall.
                preexec_fn=lambda: os.nice(HOSTILE_NICE),
                cwd=ROOT,
                env=child_env(),
                stdout=subprocess.PIPE,
            )
            time.sleep(min(10.0, seconds / 3))  # let every hostile client connect
            loaded = _searches(client, searches, searches)
            out, _ = hostile_proc.communicate(timeout=seconds + 60)
            report = json.loads(out.decode().strip().splitlines()[-1])
    ratio = pct(loaded, 50) / pct(idle, 50)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    table.add(
        SECTION,
        "conditions",
        f"{when}; loopback, {searches} searches each, 200 memories, attackers at nice "
        f"{HOSTILE_NICE}, load avg {os.getloadavg()[0]:.1f} after",
    )
    table.add(SECTION, "idle: p50 / p95", f"{ms(pct(idle, 50))} / {ms(pct(idle, 95))}")
    table.add(
        SECTION,
        f"with {clients} slow/keyless clients: p50 / p95",
        f"{ms(pct(loaded, 50))} / {ms(pct(loaded, 95))}",
    )
    table.add(SECTION, "loaded p50 / idle p50", f"{ratio:.2f}x", "target < 2x")
    answers = ", ".join(f"{n} {kind}" for kind, n in sorted(report["answers"].items()))
    table.add(
        SECTION,
        "hostile connections opened, answers",
        f"{report['connections_opened']} in {seconds:.0f} s ({answers})",
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    if not 1 <= args.clients <= 2000 or not 0 < args.seconds <= 600:
        parser.error("at most 2000 clients for at most 600 s")
    print(json.dumps(asyncio.run(hostile(args.port, args.clients, args.seconds))), flush=True)


if __name__ == "__main__":
    main()
