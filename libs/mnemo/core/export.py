"""Exporting a project (GET /v1/export): JSON lines, streamed a batch of memories at a time.

Memories go in id order, so an interrupted export resumes after the last id it wrote
(`after`); each batch is read in its own statement, and a memory written while the export
runs is exported if its id comes after the batch being read. The `end` line says the
export is complete. A memory with a stored time outside the accepted range (written before
times were validated at entry, see migration 0015) is skipped, and the `end` line lists it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from pydantic import BaseModel

from mnemo.core.engine import Engine
from mnemo.domain.transfer import (
    EmbeddingModel,
    ExportedGroup,
    ExportEnd,
    ExportHeader,
)
from mnemo.store import transfer as transfer_store

EXPORT_BATCH = 200
log = logging.getLogger(__name__)


def _line(model: BaseModel) -> str:
    return model.model_dump_json() + "\n"


async def export_lines(
    engine: Engine, project: str, after: str | None, vectors: bool
) -> AsyncIterator[str]:
    """The export of `project` (memories after the id `after`), line by line."""
    groups = await engine.list_groups(project)
    async with engine.db.connect() as conn:
        total, users, remaining = await transfer_store.counts(conn, project, after)
    embedder = engine.deps.embedder
    yield _line(
        ExportHeader(
            project=project,
            exported_at=engine.deps.clock.now(),
            embedding=EmbeddingModel(label=embedder.label, dim=embedder.dim) if vectors else None,
            groups=len(groups),
            users=users,
            memories=total,
            after=after,
            remaining=remaining,
        )
    )
    for group in groups:
        yield _line(ExportedGroup(name=group.name, config=group.model_dump(mode="json")))
    sent, position, skipped = 0, after, []
    while True:
        async with engine.db.connect() as conn:
            batch, unreadable, last = await transfer_store.read_batch(
                conn, project, position, EXPORT_BATCH, vectors
            )
        for memory in batch:
            yield _line(memory)
        sent += len(batch)
        if unreadable:  # reported at the end, never a reason to stop
            log.warning("export of %s skipped unreadable memories: %s", project, unreadable)
            skipped += unreadable
        if last is None:
            break
        position = last
    yield _line(ExportEnd(memories=sent, skipped=skipped))
