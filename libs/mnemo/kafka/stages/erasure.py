"""Dropping records of erased users as a stage meets them (the distributed mode)."""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.core.withdrawal import withdraw_batch
from mnemo.deps import Deps


async def withdrawn_if_erased(deps: Deps, run_ids: Sequence[str]) -> bool:
    """True when some of the runs belong to a user erased after their admission: they are
    redacted, the others of the record fail with a note to retry, and the record is dropped."""
    async with deps.db.begin() as tx:
        return await withdraw_batch(tx, run_ids, deps.clock.now())
