"""Which embedder made the stored vectors: one model per database.

Vectors of two models share no space. A search with one model's query vector over another
model's memories ranks by noise and fails nothing, so a changed embedder must be refused at
start-up, not found out from bad answers. The vector size (`embedding_dim`, written by the
first migration) catches a switch between models of different sizes; the embedder's label
(`embedding_model`, recorded by the first process that connects with an embedder) catches
one between models of the same size, such as two 384-dimensional encoders.

`mnemo reembed` (core/reembed.py) converts a database to another model of the same size.
A database from before labels were recorded has no label: the first embedder that connects
to it after the upgrade embeds a sample of its memories again and takes the label only if
its vectors are the stored ones. Otherwise it is refused like any other: before labels, the
bundled model was all-MiniLM-L6-v2, whose vectors bge-small must not be mixed with.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.errors import MnemoError
from mnemo.store.schema import memories

if TYPE_CHECKING:
    from mnemo.contracts.embedder import Embedder

log = logging.getLogger(__name__)

# settings_meta keys: the vector size (written by the first migration) and the label.
DIM_KEY, LABEL_KEY = "embedding_dim", "embedding_model"
# The label a database holds while `mnemo reembed` rewrites its vectors (core/reembed.py).
PASS_PREFIX = "reembedding:"
MOVE_HINT = (
    "keep the embedder the memories were made with, or move them into a fresh database "
    "with `mnemo export` (from a server running the old embedder) and "
    "`mnemo import --memories` (into one running the new), which embeds them again"
)
REEMBED_HINT = (
    "configure the embedder the memories were made with again, or stop every mnemo process "
    "and run `mnemo reembed` with the new one configured, which embeds them again in place"
)


# An unlabelled database's vectors are the configured embedder's when this many memories
# embed again to (nearly) their stored vectors; the same model gives cosine 1 up to float
# rounding, another model at best ~0.9 to a paraphrase of itself.
SAMPLE, SAME_VECTORS = 8, 0.98
UNLABELLED = "an embedder from before mnemo recorded embedders"


class EmbedderMismatch(MnemoError, RuntimeError):
    """The configured embedder is not the one that made the stored vectors. Not transient:
    retrying the connection cannot fix it. `stored`: the database's label, if it has one;
    `unlabelled`: vectors from before labels, found not to be the configured embedder's."""

    def __init__(self, message: str, stored: str | None = None, unlabelled: bool = False) -> None:
        super().__init__(message)
        self.stored, self.unlabelled = stored, unlabelled


async def check_embedder(conn: AsyncConnection, dim: int, embedder: Embedder | None) -> None:
    """Refuse an embedder other than the database's. `embedder` None (a process that never
    embeds, such as the replay commands) checks the vector size only."""
    stored_dim = await stored_setting(conn, DIM_KEY)
    if stored_dim is not None and int(stored_dim) != dim:
        raise EmbedderMismatch(
            f"the database stores {stored_dim}-dimensional embeddings but the configured "
            f"embedder makes {dim}; {MOVE_HINT}"
        )
    if embedder is None:
        return
    label = embedder.label
    stored_label = await stored_setting(conn, LABEL_KEY)
    if stored_label is None:
        await _check_unlabelled_vectors(conn, embedder)
        inserted = await conn.execute(
            text(
                "INSERT INTO settings_meta (key, value) VALUES (:key, :label) "
                "ON CONFLICT (key) DO NOTHING"
            ),
            {"key": LABEL_KEY, "label": label},
        )
        if inserted.rowcount:
            log.info("database: vectors are made by %s from now on", label)
            return
        stored_label = await stored_setting(conn, LABEL_KEY)  # labelled meanwhile
    if stored_label is not None and stored_label.startswith(PASS_PREFIX):
        raise EmbedderMismatch(
            f"`mnemo reembed` to {stored_label.removeprefix(PASS_PREFIX)} has not finished; "
            "run it again (it resumes) before starting mnemo",
            stored_label,
        )
    if stored_label != label:
        raise EmbedderMismatch(
            f"the database's vectors were made by {stored_label} but the configured "
            f"embedder is {label}; {REEMBED_HINT}",
            stored_label,
        )


async def _check_unlabelled_vectors(conn: AsyncConnection, embedder: Embedder) -> None:
    """Refuse `embedder` for stored vectors it did not make (a database from before labels:
    nothing says which model made them but the vectors themselves)."""
    query = select(memories.c.content, memories.c.embedding).order_by(memories.c.id)
    rows = (await conn.execute(query.limit(SAMPLE))).all()
    if not rows:
        return
    fresh = np.asarray(await embedder.embed([content for content, _ in rows]), dtype=float)
    stored = np.asarray([vector for _, vector in rows], dtype=float)
    norms = np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1)
    lowest = float(min((fresh * stored).sum(axis=1) / np.maximum(norms, 1e-12)))
    if lowest < SAME_VECTORS:
        raise EmbedderMismatch(
            f"the database's vectors were made by {UNLABELLED} (all-MiniLM-L6-v2 when it "
            f"was mnemo's bundled model), not by the configured {embedder.label}: "
            f"{len(rows)} memories embedded again are at cosine {lowest:.2f} of their stored "
            f"vectors; {REEMBED_HINT}",
            unlabelled=True,
        )


async def stored_setting(conn: AsyncConnection, key: str) -> str | None:
    """A `settings_meta` value (None when absent)."""
    query = text("SELECT value FROM settings_meta WHERE key = :key")
    value = (await conn.execute(query, {"key": key})).scalar_one_or_none()
    return None if value is None else str(value)
