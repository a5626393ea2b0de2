"""Dropping records of erased users as a stage meets them (the distributed mode)."""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.deps import Deps
from mnemo.store import erasure, tombstones


async def withdrawn_if_erased(deps: Deps, run_ids: Sequence[str]) -> bool:
    """True when some of the runs belong to a user erased after their admission: they are
    redacted, the others of the record fail with a note to retry, and the record is dropped."""
    async with deps.db.begin() as tx:
        erased = await tombstones.erased_among(tx, run_ids)
        if erased:
            others = [r for r in run_ids if r not in erased]
            await erasure.withdraw(tx, erased, others, deps.clock.now())
    return bool(erased)
