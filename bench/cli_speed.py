"""How quickly the CLI answers: `mnemo --help`, `mnemo search --help`, and stdio
`mnemo mcp` until it answers an MCP `initialize` (what a client waits for at launch).

    python -m bench.cli_speed [--runs N]

Each figure is the median wall time of N fresh processes (the installed `mnemo` script, as
a user runs it), and beside it their median CPU time (user + system), which a loaded machine
inflates far less than the wall time. `mnemo mcp` talks to a URL where nothing listens: its start-up check of the
server fails at once and it serves anyway, so no server's speed is in the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(*args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one `mnemo ARGS` process."""
    cpu, began = _children_cpu(), time.perf_counter()
    subprocess.run([_mnemo(), *args], env=_env(), capture_output=True, check=True, timeout=60)
    return time.perf_counter() - began, _children_cpu() - cpu


def time_mcp_ready() -> tuple[float, float]:
    """(wall, CPU) seconds from launch to the first answer to `initialize` on stdout (the
    CPU time is the whole process's, which ends right after that answer)."""
    cpu, began = _children_cpu(), time.perf_counter()
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
    finally:
        process.kill()
        process.wait(timeout=10)
    return elapsed, _children_cpu() - cpu


def _medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def measure(runs: int) -> dict[str, tuple[float, float]]:
    """(wall, CPU) medians per figure."""
    return {
        "help": _medians([time_command("--help") for _ in range(runs)]),
        "search_help": _medians([time_command("search", "--help") for _ in range(runs)]),
        "mcp_ready": _medians([time_mcp_ready() for _ in range(runs)]),
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
        wall, cpu = figures[key]
        met = "met" if wall <= TARGETS[key] else "**missed**"
        table.add(
            "10 CLI speed",
            f"{label} (median of {runs}, load {load:.1f})",
            f"{wall:.2f} s wall, {cpu:.2f} s CPU",
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
