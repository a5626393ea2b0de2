"""The extractor's sliding windows (distributed mode): each scope's last inputs, as context.

They live in a changelog-backed faust table, one value per "{group}|{step id}|{scope key}":
`{"partition": p, "entries": [{"run_id": ..., "units": [...]}, ...]}`. The partition lets
a tick of that partition rewrite the value (faust writes a table change to the partition of
the event being processed), so entries whose raw input is gone (an erased user, expired
retention, an erased memory) are swept out on ticks, as well as before every slide. Values
written before partitions were kept (a bare list) are still read, and swept at their scope's
next add.
"""

from __future__ import annotations

from collections.abc import Collection, MutableMapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.steps.buffering import WindowEntry, slide
from mnemo.store import retention

Windows = MutableMapping[str, Any]


def window_key(group: str, step_id: str, scope_key: str) -> str:
    return f"{group}|{step_id}|{scope_key}"


def entries(value: Any) -> list[WindowEntry]:
    stored = value.get("entries", []) if isinstance(value, dict) else value or []
    return [WindowEntry(e["run_id"], e["units"]) for e in stored]


def slide_into(
    windows: Windows,
    key: str,
    run_id: str,
    units: list[str],
    size: int,
    partition: int,
    gone: Collection[str] = (),
) -> list[str]:
    """Add the run's units to the window (dropping entries of runs in `gone` first) and
    return the context it gives the run: the earlier inputs' units."""
    earlier = [e for e in entries(windows.get(key)) if e.run_id not in gone]
    window, context = slide(earlier, run_id, units, size)
    windows[key] = _value(window, partition)
    return context


def runs_held(windows: Windows, partition: int) -> set[str]:
    """The runs with entries in the windows of `partition`."""
    return {
        e.run_id
        for value in list(windows.values())
        if _partition(value) == partition
        for e in entries(value)
    }


def drop_runs(windows: Windows, partition: int, gone: Collection[str]) -> int:
    """Remove the entries of runs in `gone` from the windows of `partition` (a window left
    empty is deleted). Returns how many entries went."""
    dropped = 0
    for key, value in list(windows.items()):
        if _partition(value) != partition:
            continue
        held = entries(value)
        kept = [e for e in held if e.run_id not in gone]
        if len(kept) == len(held):
            continue
        dropped += len(held) - len(kept)
        if kept:
            windows[key] = _value(kept, partition)
        else:
            del windows[key]
    return dropped


def _value(window: list[WindowEntry], partition: int) -> dict[str, Any]:
    return {
        "partition": partition,
        "entries": [{"run_id": e.run_id, "units": list(e.units)} for e in window],
    }


def _partition(value: Any) -> int | None:
    return value.get("partition") if isinstance(value, dict) else None


async def sweep(db: AsyncEngine, windows: Windows, partition: int) -> int:
    """Drop, from the windows of `partition`, the entries whose raw input is gone."""
    held = runs_held(windows, partition)
    if not held:
        return 0
    async with db.connect() as conn:
        gone = await retention.raw_input_gone(conn, held)
    return drop_runs(windows, partition, gone) if gone else 0
