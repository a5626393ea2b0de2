"""Moving a database to the bundled embedding model when mnemo's bundled model changed.

mnemo bundled all-MiniLM-L6-v2 before bge-small-en-v1.5. A database whose vectors that
model made (labelled so, or from before labels and found not to be bge-small's) is refused
by any process (`store.embedder_identity`). The embedded mode, one process owning its
database, converts it instead when it starts on the bundled model: `core.reembed`'s pass,
resumable, with progress in the log. The distributed services never do (several start at
once, and a pass needs every other process stopped): they keep the refusal, which names
`mnemo reembed`.

Cosine thresholds kept in groups' configurations (consolidation's `similarity`,
reconsolidation's and reconcile steps' `min_similarity`) were chosen on the old model's
scale, which runs much lower; they are not rewritten (an operator may have chosen them),
but every one below the bundled model's default is named in the log.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.contracts.embedder import Embedder
from mnemo.core.reembed import reembed
from mnemo.domain.consolidation import ConsolidationConfig
from mnemo.domain.reconsolidation import ReconsolidationConfig
from mnemo.embeddings.local import LocalEmbedder
from mnemo.settings import Settings
from mnemo.store.embedder_identity import PASS_PREFIX, EmbedderMismatch
from mnemo.store.schema import groups

log = logging.getLogger(__name__)

BUNDLED = LocalEmbedder.label
# Labels of models mnemo bundled before.
PREVIOUSLY_BUNDLED = frozenset({"local:all-MiniLM-L6-v2"})


def upgradable(refusal: EmbedderMismatch, embedder: Embedder) -> bool:
    """Whether the refusal is a database of an earlier bundled model (labelled so, or from
    before labels, when MiniLM was the default; or a cut pass to the bundled one) meeting
    the bundled model. Not another vector size: that cannot be converted in place."""
    if embedder.label != BUNDLED:
        return False
    if refusal.unlabelled:
        return True
    return refusal.stored in PREVIOUSLY_BUNDLED or refusal.stored == PASS_PREFIX + BUNDLED


def bundled_model_changed(refusal: EmbedderMismatch) -> EmbedderMismatch:
    """The refusal a process that does not convert gives (the old model is not shipped,
    so "configure the old embedder again" is no way out)."""
    return EmbedderMismatch(
        f"mnemo's bundled embedding model is {BUNDLED} now and this database's vectors are "
        "an earlier model's: stop every mnemo process using it and run `mnemo reembed` "
        "once (it resumes if interrupted; `mnemo serve` alone would convert it at start-up)",
        refusal.stored,
    )


async def upgrade_to_bundled(
    db: AsyncEngine, embedder: Embedder, refusal: EmbedderMismatch
) -> None:
    """Embed every stored vector again with the bundled model (see module doc)."""
    was = refusal.stored or "a model from before mnemo recorded embedders"
    log.warning(
        "mnemo's bundled embedding model is %s now; the stored vectors were made by %s: "
        "embedding every memory again (once; an interrupted pass resumes at the next start)",
        embedder.label,
        was,
    )

    def progress(table: str, done: int, total: int) -> None:
        log.warning("re-embedding %s: %d of %d", table, done, total)

    report = await reembed(db, embedder, on_batch=progress)
    log.warning("re-embedded with %s: %s", embedder.label, report.rewritten)
    async with db.connect() as conn:
        rows = (await conn.execute(select(groups.c.project, groups.c.name, groups.c.config))).all()
    for project, name, config in rows:
        for where, value, default in low_thresholds(config):
            log.warning(
                "group %s/%s: %s is %s, below the bundled model's default %s (chosen on the "
                "old model's scale, where texts score much lower); review it",
                project,
                name,
                where,
                value,
                default,
            )


def low_thresholds(config: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(where, value, default) for each stored cosine threshold below its default now
    (a reconcile step's: the settings' floor's default; -1, "always", is no threshold)."""
    found = []
    consolidation = config.get("consolidation") or {}
    reconsolidation = config.get("reconsolidation") or {}
    checks = [
        ("consolidation.similarity", consolidation.get("similarity"),
         ConsolidationConfig.model_fields["similarity"].default),
        ("reconsolidation.min_similarity", reconsolidation.get("min_similarity"),
         ReconsolidationConfig.model_fields["min_similarity"].default),
    ]  # fmt: skip
    for step in (config.get("pipeline") or {}).get("steps", []):
        floor = Settings.model_fields["reconcile_min_similarity"].default
        checks.append((f"step {step.get('id')}.min_similarity", step.get("min_similarity"), floor))
    for where, value, default in checks:
        if value is not None and -1 < value < default:
            found.append((where, value, default))
    return found
