"""How quickly the CLI answers: `mnemo --help`, `mnemo search --help`, and stdio
`mnemo mcp` until it answers an MCP `initialize` (what a client waits for at launch).

    python -m bench.cli_speed [--runs N]

Each figure is the median wall time of N fresh processes (the installed `mnemo` script, as
a user runs it). `mnemo mcp` talks to a URL where nothing listens: its start-up check of the
server fails at once and it serves anyway, so no server's speed is in the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, Table

TARGETS = {"help": 0.3, "search_help": 0.3, "mcp_ready": 1.5}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def _mnemo() -> str:
    script = Path(sys.executable).parent / "mnemo"
    return str(script) if script.exists() else "mnemo"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    return env | {"PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}"}


def time_command(*args: str) -> float:
    began = time.perf_counter()
    subprocess.run([_mnemo(), *args], env=_env(), capture_output=True, check=True, timeout=60)
    return time.perf_counter() - began


def time_mcp_ready() -> float:
    """From launch to the first answer to `initialize` on stdout."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [_mnemo(), "mcp", "--url", "http://127.0.0.1:9", "--api-key", "mnemo_bench"],
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        line = process.stdout.readline()
        elapsed = time.perf_counter() - began
        answer = json.loads(line)
        if answer.get("id") != 1 or "result" not in answer:
            raise RuntimeError(f"mnemo mcp answered {line[:200]!r}")
        return elapsed
    finally:
        process.kill()
        process.wait(timeout=10)


def measure(runs: int) -> dict[str, float]:
    return {
        "help": statistics.median(time_command("--help") for _ in range(runs)),
        "search_help": statistics.median(time_command("search", "--help") for _ in range(runs)),
        "mcp_ready": statistics.median(time_mcp_ready() for _ in range(runs)),
    }


def run(table: Table, runs: int = 5) -> None:
    """Section 10 of `make bench`."""
    figures = measure(runs)
    load = os.getloadavg()[0]
    labels = {
        "help": "`mnemo --help`",
        "search_help": "`mnemo search --help`",
        "mcp_ready": "stdio `mnemo mcp` until initialize answers",
    }
    for key, label in labels.items():
        met = "met" if figures[key] <= TARGETS[key] else "**missed**"
        table.add(
            "10 CLI speed",
            f"{label} (median of {runs}, load {load:.1f})",
            f"{figures[key]:.2f} s",
            f"<= {TARGETS[key]} s — {met}",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    table = Table()
    run(table, args.runs)
    print("\n" + table.render())


if __name__ == "__main__":
    main()
