"""Embedding every stored vector again with the configured embedder (`mnemo reembed`).

A database keeps one embedder's vectors (`store.embedder_identity`). Changing to another
model of the same size is done in place: every memory's and every kept version's vector is
computed again from its text, in id order and in batches, each batch committed with the
pass's progress, so an interrupted pass resumes where it stopped. While it runs, the
database's label names the pass (`reembedding:<label>`), so a server started meanwhile is
refused rather than searching half-converted vectors; at the end it names the new embedder.

Every other process must be stopped: one still running would keep writing the old model's
vectors. The pass refuses to start while the database has other client connections.
Another size cannot be done in place (the vector columns have the old size): export and
import into a fresh database instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.contracts.embedder import Embedder
from mnemo.errors import MnemoError
from mnemo.store import reembedding
from mnemo.store.embedder_identity import (
    DIM_KEY,
    LABEL_KEY,
    MOVE_HINT,
    PASS_PREFIX,
    EmbedderMismatch,
    stored_setting,
)
from mnemo.store.reembedding import TABLES, Progress

log = logging.getLogger(__name__)


class ReembedRefused(MnemoError, RuntimeError):
    """The pass cannot start; the message says why and what to do."""


@dataclass
class ReembedReport:
    previous: str | None  # the label the vectors had ("reembedding:..." if a pass was cut)
    label: str
    rewritten: dict[str, int] = field(default_factory=dict)  # table -> vectors written


async def reembed(
    db: AsyncEngine,
    embedder: Embedder,
    batch_size: int = 256,
    on_batch: Callable[[str, int, int], None] | None = None,
) -> ReembedReport:
    """Rewrite every stored vector with `embedder`. `on_batch(table, done, total)` follows
    the pass (`total`: vectors of the table left when this run reached it). Nothing to do
    when the vectors already come from `embedder`."""
    start = await _begin(db, embedder)
    report = ReembedReport(previous=start.previous, label=embedder.label)
    if start.resume is None:
        return report
    resume: Progress | None = start.resume
    for table in TABLES[TABLES.index(start.resume.table) :]:
        after = resume.after if resume is not None and resume.table == table else ""
        resume = None
        report.rewritten[table] = await _table(db, embedder, table, after, batch_size, on_batch)
    async with db.begin() as conn:
        await reembedding.save_progress(conn, None)
        await reembedding.set_label(conn, embedder.label)
    log.info("reembed: vectors are made by %s now (%s)", embedder.label, report.rewritten)
    return report


@dataclass(frozen=True)
class _Start:
    previous: str | None
    resume: Progress | None  # where to start; None: nothing to do


async def _begin(db: AsyncEngine, embedder: Embedder) -> _Start:
    async with db.begin() as conn:
        others = await reembedding.other_connections(conn)
        if others:
            raise ReembedRefused(
                f"{others} other connection(s) to this database: stop every mnemo server "
                "and service using it first (a running one would keep writing vectors of "
                "the old embedder)"
            )
        dim = await stored_setting(conn, DIM_KEY)
        if dim is not None and int(dim) != embedder.dim:
            raise EmbedderMismatch(
                f"the database stores {dim}-dimensional embeddings and {embedder.label} makes "
                f"{embedder.dim}: another size cannot be converted in place; {MOVE_HINT}"
            )
        previous = await stored_setting(conn, LABEL_KEY)
        saved = await reembedding.progress(conn)
        if saved is not None and saved.label == embedder.label:
            return _Start(previous, saved)  # an interrupted pass to the same model
        if previous == embedder.label:
            return _Start(previous, None)
        resume = Progress(label=embedder.label, table=TABLES[0], after="")
        await reembedding.save_progress(conn, resume)
        await reembedding.set_label(conn, PASS_PREFIX + embedder.label)
        return _Start(previous, resume)


async def _table(
    db: AsyncEngine,
    embedder: Embedder,
    table: str,
    after: str,
    batch_size: int,
    on_batch: Callable[[str, int, int], None] | None,
) -> int:
    async with db.connect() as conn:
        total = await reembedding.count(conn, table, after)
    done = 0
    while True:
        async with db.connect() as conn:
            rows = await reembedding.batch(conn, table, after, batch_size)
        if not rows:
            return done
        vectors = await embedder.embed([content for _, content in rows])
        ids = [row_id for row_id, _ in rows]
        after = ids[-1]
        async with db.begin() as conn:
            await reembedding.write(conn, table, ids, vectors)
            await reembedding.save_progress(conn, Progress(embedder.label, table, after))
        done += len(rows)
        if on_batch is not None:
            on_batch(table, done, total)
