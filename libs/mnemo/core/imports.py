"""Importing an export into a project (POST /v1/import): groups, then memories as they are.

Nothing is extracted again and no pipeline runs: a memory keeps its id, times, versions,
status and writers. Its vectors are kept when they come from the model this server embeds
with (same label and size), and computed here otherwise. Two rules bend "as they are":
- a bounded topic's memory keeps its id unless its scope already holds a memory here (then
  it takes that memory's id); later writes find it by its scope and update it in place
  (`store.bounded`);
- memories of a user erased in this project are not written (an erase is never undone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from mnemo.core.admission import check_group
from mnemo.core.engine import Engine
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import FieldError, InvalidRequest, NotFound, Refusal, location_of
from mnemo.domain.scope import bounded_memory_id, normalize_user_id, topic_scope
from mnemo.domain.transfer import (
    ExportedGroup,
    ExportedMemory,
    ExportedSource,
    ImportBatch,
    ImportReport,
    Rekeyed,
    decode_vector,
)
from mnemo.store import bounded, tombstones
from mnemo.store import transfer as transfer_store

EMBED_CHUNK = 256


@dataclass
class _Prepared:
    """One memory ready to write: its row (without vectors yet) and its versions."""

    index: int  # in the request
    source: ExportedMemory
    row: dict[str, Any]
    versions: list[dict[str, Any]] = field(default_factory=list)


async def import_batch(engine: Engine, project: str, batch: ImportBatch) -> ImportReport:
    report = ImportReport()
    for index, exported in enumerate(batch.groups):
        await _put_group(engine, project, index, exported)
        report.groups += 1
    prepared = await _prepare(engine, project, batch.memories, report)
    if not prepared:
        return report
    report.embeddings = await _vectors(engine, batch, prepared)
    async with engine.db.begin() as tx:
        erased = set()
        for user in sorted({p.row["user_id"] for p in prepared if p.row["user_id"]}):
            if await tombstones.guard_user(tx, project, user) is not None:
                erased.add(user)
        kept = [p for p in prepared if p.row["user_id"] not in erased]
        report.skipped_erased = [p.row["id"] for p in prepared if p.row["user_id"] in erased]
        if kept:
            moved = {r.old_id: r.new_id for r in report.rekeyed}
            try:
                report.already_present = await transfer_store.write(
                    tx,
                    project,
                    [p.row for p in kept],
                    {p.row["id"]: p.versions for p in kept},
                    {p.row["id"]: _sources(p.source, moved) for p in kept},
                )
            except transfer_store.ImportConflict as exc:
                raise _conflict(exc.ids) from exc
    report.imported = len(kept)
    return report


async def _put_group(engine: Engine, project: str, index: int, exported: ExportedGroup) -> None:
    """Create or replace a group with the exported configuration, checked as a PUT is."""
    where = ("body", "groups", index, "config")
    try:
        group = GroupConfig.model_validate({**exported.config, "name": exported.name})
    except ValidationError as exc:
        errors = [
            FieldError(location=location_of((*where, *e["loc"])), message=e["msg"])
            for e in exc.errors(include_url=False, include_input=False)
        ]
        raise InvalidRequest("invalid group configuration; nothing was imported", errors) from exc
    limits = engine.settings.limits
    check_group(group, limits)
    if not await engine.groups.put(project, group, limits.groups_per_project):
        message = f"the project already has {limits.groups_per_project} groups, its limit"
        location = location_of(("body", "groups", index, "name"))
        raise InvalidRequest(
            message, [FieldError(location=location, message=message)], Refusal.unprocessable
        )


async def _prepare(
    engine: Engine, project: str, memories: Sequence[ExportedMemory], report: ImportReport
) -> list[_Prepared]:
    """Rows for the memories in this project: the group must exist; user ids in their
    compared form; one memory per bounded scope (newest wins within a batch)."""
    groups: dict[str, GroupConfig] = {}
    errors: list[FieldError] = []
    by_id: dict[str, _Prepared] = {}
    scopes: dict[str, str] = {}  # a bounded scope's derived id -> the id it has here
    for index, memory in enumerate(memories):
        if memory.group not in groups:
            try:
                groups[memory.group] = await engine.group(project, memory.group)
            except NotFound as exc:
                location = location_of(("body", "memories", index, "group"))
                errors.append(FieldError(location=location, value=memory.group, message=str(exc)))
                continue
        row = _row(memory, normalize_user_id(memory.user_id))
        group = groups[memory.group]
        if group.has_topic(memory.topic) and group.topic(memory.topic).is_bounded:
            row["id"] = await _bounded_id(engine, project, group, row, scopes)
            if row["id"] != memory.id:
                report.rekeyed.append(Rekeyed(old_id=memory.id, new_id=row["id"]))
        earlier = by_id.get(row["id"])
        if earlier is not None:
            older, newer = sorted((earlier, _Prepared(index, memory, row)), key=_updated)
            report.skipped_superseded.append(older.source.id)
            by_id[row["id"]] = newer
            continue
        by_id[row["id"]] = _Prepared(index, memory, row)
    if errors:
        raise InvalidRequest(
            "memories of unknown groups; nothing was imported", errors, Refusal.unprocessable
        )
    for prepared in by_id.values():
        prepared.versions = [
            v.model_dump(exclude={"embedding"}) | {"embedding": None}
            for v in prepared.source.versions
        ]
    return list(by_id.values())


def _sources(memory: ExportedMemory, moved: dict[str, str]) -> list[ExportedSource]:
    """A rule's sources, pointing at the ids its episodes have here (a bounded episode
    rekeyed in the same batch moved)."""
    return [
        s.model_copy(update={"memory_id": moved.get(s.memory_id, s.memory_id)})
        for s in memory.sources
    ]


def _updated(prepared: _Prepared) -> Any:
    return prepared.source.updated_at


async def _bounded_id(
    engine: Engine, project: str, group: GroupConfig, row: dict[str, Any], scopes: dict[str, str]
) -> str:
    """The id a bounded memory is stored under: the id of the memory its scope already
    holds here, else its own (Engram's, or another project's), so a pull keeps ids."""
    topic = group.topic(row["topic"])
    scope = topic_scope(topic, row["user_id"], row["properties"])
    derived = bounded_memory_id(project, group.name, topic.name, scope)
    if derived not in scopes:
        async with engine.db.connect() as conn:
            here = await bounded.existing_id(
                conn, project, group.name, topic, row["user_id"], row["properties"]
            )
        scopes[derived] = here or str(row["id"])
    return scopes[derived]


def _row(memory: ExportedMemory, user_id: str | None) -> dict[str, Any]:
    row = memory.model_dump(exclude={"kind", "versions", "embedding", "sources"})
    row["user_id"] = user_id
    row["status"] = memory.status.value
    row["embedding"] = None
    return row


async def _vectors(engine: Engine, batch: ImportBatch, prepared: list[_Prepared]) -> Any:
    """Fill every memory's and version's vector: the exported one when it comes from this
    server's model, else this server's. Returns how: kept or recomputed."""
    embedder = engine.deps.embedder
    same_model = batch.embedding is not None and (
        (batch.embedding.label, batch.embedding.dim) == (embedder.label, embedder.dim)
    )
    wanted: list[tuple[dict[str, Any], str]] = []  # (row to fill, its text)
    for p in prepared:
        source_vectors = [p.source.embedding, *(v.embedding for v in p.source.versions)]
        targets = [p.row, *p.versions]
        for target, text, vector in zip(
            targets, [p.source.content, *(v.content for v in p.source.versions)], source_vectors,
            strict=True,
        ):  # fmt: skip
            if same_model and vector is not None:
                target["embedding"] = _decoded(vector, embedder.dim, p.index)
            elif same_model and target is not p.row:
                target["embedding"] = None  # kept without one: as-of ranks by the memory's
            else:
                wanted.append((target, text))
    texts = sorted({text for _, text in wanted})
    computed: dict[str, list[float]] = {}
    for start in range(0, len(texts), EMBED_CHUNK):
        chunk = texts[start : start + EMBED_CHUNK]
        computed.update(zip(chunk, await embedder.embed(chunk), strict=True))
    for target, text in wanted:
        target["embedding"] = computed[text]
    return "kept" if not wanted else "recomputed"


def _decoded(text: str, dim: int, index: int) -> list[float]:
    try:
        vector = decode_vector(text)
    except ValueError as exc:
        raise _bad_vector(index, str(exc)) from exc
    if len(vector) != dim:
        raise _bad_vector(index, f"{len(vector)} values where the model makes {dim}")
    return vector


def _bad_vector(index: int, problem: str) -> InvalidRequest:
    location = location_of(("body", "memories", index, "embedding"))
    return InvalidRequest(
        "an exported vector does not fit the model it names; nothing was imported",
        [FieldError(location=location, message=problem)],
        Refusal.unprocessable,
    )


def _conflict(ids: list[str]) -> InvalidRequest:
    shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    return InvalidRequest(
        "memory ids that belong to another project or group here; nothing of this batch "
        f"was imported: {shown}",
        [FieldError(location="body.memories", message=f"id taken: {i}") for i in ids[:10]],
        Refusal.conflict,
    )
