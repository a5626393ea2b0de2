"""Recall@10 of HNSW vector search against an exact scan, on the same filter and vectors."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text

from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.engine.engine import Engine
from mnemo.store.search import vector_search
from mnemo.store.tenancy import visible_memories

K = 10


async def recall_at_k(
    engine: Engine, project: str, user: str, topic: str, embeddings: Sequence[Sequence[float]]
) -> float:
    """Mean |HNSW top-k ∩ exact top-k| / k over the query embeddings."""
    group = await engine.group(project, "default")
    query = MemoryQuery(
        project=project,
        group="default",
        topics=(TopicSelector(name=topic),),
        user_id=user,
        limit=K,
    )
    where = visible_memories(query, group)
    ef = int(engine.settings.hnsw_ef_search)
    total = 0.0
    for embedding in embeddings:
        async with engine.database.engine.begin() as conn:
            await conn.execute(text(f"SET LOCAL hnsw.ef_search = {ef}"))
            approx = {row.id for row, _ in await vector_search(conn, where, embedding, K)}
        async with engine.database.engine.begin() as conn:
            await conn.execute(text("SET LOCAL enable_indexscan = off"))
            await conn.execute(text("SET LOCAL enable_bitmapscan = off"))
            exact = {row.id for row, _ in await vector_search(conn, where, embedding, K)}
        total += len(approx & exact) / max(1, len(exact))
    return total / max(1, len(embeddings))


async def uses_hnsw(engine: Engine, embedding: Sequence[float]) -> bool:
    """Whether the planner picks the HNSW index for a scoped vector query."""
    vector = "[" + ",".join(f"{x:.6f}" for x in embedding) + "]"
    async with engine.database.engine.begin() as conn:
        plan = (
            await conn.execute(
                text(
                    "EXPLAIN SELECT id FROM memories WHERE project = 'default' "
                    "AND \"group\" = 'default' AND status = 'active' "
                    "ORDER BY embedding <=> CAST(:v AS vector) LIMIT 10"
                ),
                {"v": vector},
            )
        ).all()
    return any("memories_embedding" in str(row[0]) for row in plan)
