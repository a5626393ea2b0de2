"""Where a memory came from: the runs that wrote or changed it.

Built from what the engine exposes today (a memory's `run_ids` and its versions' runs); a
fuller provenance source can replace `memory_provenance` without touching the templates.
"""

from __future__ import annotations

from dataclasses import dataclass

from mnemo.api.deps import EngineDep
from mnemo.domain.memory import MemoryVersion, Run


@dataclass(frozen=True)
class Provenance:
    runs: list[Run]  # newest first
    # Run ids recorded on the memory that are no longer in the store (or not this project's).
    missing_run_ids: list[str]


async def memory_provenance(
    engine: EngineDep,
    project: str,
    group: str,
    user_id: str | None,
    memory_id: str,
    versions: list[MemoryVersion],
) -> Provenance:
    ids = await engine.memory_run_ids(project, group, user_id, memory_id)
    ids += [v.run_id for v in versions if v.run_id and v.run_id not in ids]
    found = await engine.get_runs(project, ids)
    known = {r.run_id for r in found}
    return Provenance(found, [i for i in ids if i not in known])
