"""Shared helpers: percentiles, the result table, child processes and synthetic text."""

from __future__ import annotations

import math
import os
import random
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
PYTHONPATH = os.pathsep.join([str(ROOT / "libs"), str(ROOT)])


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[rank]


def ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.1f} ms"


@dataclass
class Table:
    """One table of figures: (section, metric, value, target/note) rows."""

    rows: list[tuple[str, str, str, str]] = field(default_factory=list)

    def add(self, section: str, metric: str, value: str, note: str = "") -> None:
        self.rows.append((section, metric, value, note))
        print(f"  [{section}] {metric}: {value}  {note}".rstrip(), flush=True)

    def render(self) -> str:
        head = ("section", "metric", "value", "target / note")
        widths = [max(len(r[i]) for r in [head, *self.rows]) for i in range(4)]
        line = "+".join("-" * (w + 2) for w in widths)
        out = [line, " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)), line]
        previous = None
        for row in self.rows:
            cells = (row[0] if row[0] != previous else "", *row[1:])
            out.append(" | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))
            previous = row[0]
        out.append(line)
        return "\n".join(out)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=PYTHONPATH, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.update(extra)
    return env


def spawn(args: list[str], log: Path, **env: str) -> subprocess.Popen[bytes]:
    """Start `python args...` (this interpreter) with the repo on PYTHONPATH; output to `log`."""
    handle = log.open("wb")
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=child_env(**env),
        stdout=handle,
        stderr=subprocess.STDOUT,
    )


def wait_http(url: str, proc: subprocess.Popen[bytes], timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited; see {log}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s; see {log}")


def stop(proc: subprocess.Popen[bytes] | None, timeout: float = 20.0) -> None:
    """Stop a child we started (SIGTERM, then SIGKILL)."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


_SUBJECTS = "I|My sister|My manager|Our team|My partner|My neighbour|My son|My friend Ana".split(
    "|"
)
_VERBS = "like|prefer|dislike|often cook|am learning|bought|visited|recommend|plan to try|avoid"
_OBJECTS = (
    "dark roast coffee|green tea|the violin|rock climbing|Italian food|spicy ramen|jazz records|"
    "the Lisbon office|electric bikes|Rust programming|sourdough bread|board games|trail running|"
    "vintage cameras|the mountains|sci-fi novels|yoga classes|chess openings|oat milk|"
    "the night shift|remote work|pottery|Kubernetes clusters|marathon training|watercolours"
).split("|")
_WHEN = "on weekends|every morning|since last spring|after work|in the summer|twice a week|lately"


def sentence(rng: random.Random, serial: int | None = None) -> str:
    """A short first-person fact; `serial` makes it unique (a number word at the end)."""
    text = (
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS.split('|'))} {rng.choice(_OBJECTS)} "
        f"{rng.choice(_WHEN.split('|'))}"
    )
    return text if serial is None else f"{text}, note {serial}"


def question(rng: random.Random, serial: int) -> str:
    """A search query; `serial` keeps every query distinct (no embedding-cache hits)."""
    return f"what does the user think about {rng.choice(_OBJECTS)} ({serial})"
