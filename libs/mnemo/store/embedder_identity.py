"""Which embedder made the stored vectors: one model per database.

Vectors of two models share no space. A search with one model's query vector over another
model's memories ranks by noise and fails nothing, so a changed embedder must be refused at
start-up, not found out from bad answers. The vector size (`embedding_dim`, written by the
first migration) catches a switch between models of different sizes; the embedder's label
(`embedding_model`, recorded by the first process that connects with an embedder) catches
one between models of the same size, such as two 384-dimensional encoders.

`mnemo reembed` (core/reembed.py) converts a database to another model of the same size.
A database from before labels were recorded gets the label of the first embedder that
connects to it after the upgrade: the vector size already matched, and the stored vectors
cannot tell which model made them.
"""

from __future__ import annotations

import logging

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

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


class EmbedderMismatch(RuntimeError):
    """The configured embedder is not the one that made the stored vectors. Not transient:
    retrying the connection cannot fix it."""


async def check_embedder(conn: AsyncConnection, dim: int, label: str | None) -> None:
    """Refuse an embedder other than the database's. `label` None (a process that never
    embeds, such as the replay commands) checks the vector size only."""
    stored_dim = await stored_setting(conn, DIM_KEY)
    if stored_dim is not None and int(stored_dim) != dim:
        raise EmbedderMismatch(
            f"the database stores {stored_dim}-dimensional embeddings but the configured "
            f"embedder makes {dim}; {MOVE_HINT}"
        )
    if label is None:
        return
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
    stored_label = await stored_setting(conn, LABEL_KEY)
    if stored_label is not None and stored_label.startswith(PASS_PREFIX):
        raise EmbedderMismatch(
            f"`mnemo reembed` to {stored_label.removeprefix(PASS_PREFIX)} has not finished; "
            "run it again (it resumes) before starting mnemo"
        )
    if stored_label != label:
        raise EmbedderMismatch(
            f"the database's vectors were made by {stored_label} but the configured "
            f"embedder is {label}; {REEMBED_HINT}"
        )


async def stored_setting(conn: AsyncConnection, key: str) -> str | None:
    """A `settings_meta` value (None when absent)."""
    query = text("SELECT value FROM settings_meta WHERE key = :key")
    value = (await conn.execute(query, {"key": key})).scalar_one_or_none()
    return None if value is None else str(value)
