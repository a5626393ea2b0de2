"""CPU time of process trees from /proc: what the processes under test burnt, not the
machine's load (other work on a shared machine would count too)."""

from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, own CPU seconds, CPU seconds of waited-for children) of `pid`."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return ppid, (utime + stime) / TICKS, (cutime + cstime) / TICKS


def tree_cpu_seconds(roots: list[int]) -> float:
    """CPU seconds of `roots` and all their descendants, the exited ones included (as far as
    their parents waited for them, e.g. Postgres backends reaped by the postmaster)."""
    stats: dict[int, tuple[int, float, float]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (found := _stat(int(entry.name))) is not None:
            stats[int(entry.name)] = found
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, seen, stack = 0.0, set(), [p for p in roots if p in stats]
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        _, own, waited = stats[pid]
        total += own + waited
        stack.extend(children.get(pid, []))
    return total


def postmaster_pid(pg_dir: Path) -> int | None:
    """The pid of the Postgres server whose data folder is `pg_dir`."""
    try:
        return int((pg_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
