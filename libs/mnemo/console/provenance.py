"""Where a memory came from: each version with what wrote it, from the engine's provenance.

A version is written by a run (its raw input shown while the group retains it), by a
consolidation pass (the episodes it was made from), or by a delete through the API.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mnemo.api.deps import EngineDep
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import Run
from mnemo.domain.provenance import Provenance, RunSource, VersionProvenance
from mnemo.domain.requests import NotFound

# Source episodes shown per consolidated version (the rest are counted).
MAX_SOURCES = 20


@dataclass(frozen=True)
class Source:
    memory_id: str
    content: str | None  # None: no longer readable (deleted or erased)


@dataclass(frozen=True)
class VersionView:
    version: VersionProvenance
    writer: str  # "run", "consolidation" or "api"
    raw_input: list[str] | None  # the run's input units while retained
    sources: list[Source] = field(default_factory=list)
    more_sources: int = 0

    @property
    def run(self) -> RunSource | None:
        return self.version.run

    @property
    def producer(self) -> str | None:
        """What produced this version: the model's name, or the offline heuristics.

        Read from the run's label (`RunSource.produced_by`, "offline" or a model name) where
        runs record it; getattr, because runs of this branch do not record it yet. None (a
        consolidation pass, an API delete, or a run from before labels) reads as "not
        recorded".
        """
        label = getattr(self.version.run, "produced_by", None) if self.version.run else None
        if not label:
            return None
        return "offline heuristics" if label == "offline" else f"model {label}"


@dataclass(frozen=True)
class MemoryProvenance:
    status: str  # active, archived (deleted) or consolidated (held by a rule)
    versions: list[VersionView]  # newest first, the current state first
    runs: list[Run]  # the runs that wrote a version, newest first
    missing_run_ids: list[str]  # runs that wrote a version and are no longer on record


def _raw_input(run: RunSource | None) -> list[str] | None:
    if run is None or run.raw_input is None:
        return None
    return AddInput.model_validate(run.raw_input).text_units()


async def _sources(
    engine: EngineDep, project: str, group: str, user_id: str | None, ids: list[str]
) -> list[Source]:
    shown = []
    for memory_id in ids[:MAX_SOURCES]:
        try:
            memory = await engine.get_memory(project, group, user_id, memory_id)
            shown.append(Source(memory_id, memory.content))
        except NotFound:
            history = await _last_content(engine, project, group, user_id, memory_id)
            shown.append(Source(memory_id, history))
    return shown


async def _last_content(
    engine: EngineDep, project: str, group: str, user_id: str | None, memory_id: str
) -> str | None:
    """A consolidated episode is out of default reads; its provenance still has its text."""
    try:
        found = await engine.memory_provenance(project, group, user_id, memory_id)
    except NotFound:
        return None
    return found.versions[-1].content if found.versions else None


async def memory_provenance(
    engine: EngineDep, project: str, group: str, user_id: str | None, memory_id: str
) -> MemoryProvenance:
    found: Provenance = await engine.memory_provenance(project, group, user_id, memory_id)
    views = []
    for v in reversed(found.versions):
        writer = "consolidation" if v.sources else ("run" if v.run_id else "api")
        sources = await _sources(engine, project, group, user_id, v.sources) if v.sources else []
        views.append(
            VersionView(v, writer, _raw_input(v.run), sources, max(0, len(v.sources) - MAX_SOURCES))
        )
    runs = await engine.get_runs(project, found.run_ids)
    known = {r.run_id for r in runs}
    return MemoryProvenance(
        found.status.value, views, runs, [i for i in found.run_ids if i not in known]
    )
