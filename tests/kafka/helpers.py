"""Adds and waits for the Kafka suite."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from mnemo.core.engine import Engine
from mnemo.domain.memory import Memory, Run
from mnemo.domain.requests import AddRequest, ListRequest, NotFound


async def add(engine: Engine, project: str, user: str, *lines: str) -> Run:
    body: dict[str, Any] = {
        "group": "kt",
        "user_id": user,
        "input": {"string": {"content": list(lines)}},
    }
    return await engine.add(project, AddRequest.model_validate(body))


async def add_state(engine: Engine, project: str, user: str, content: str) -> Run:
    body = {
        "group": "kt",
        "user_id": user,
        "input": {"pre_extracted": {"items": [{"topic": "State", "content": content}]}},
    }
    return await engine.add(project, AddRequest.model_validate(body))


async def statuses(engine: Engine, project: str, run_ids: list[str]) -> Counter[str]:
    """Status counts; runs that outside producers started count as `missing` until the
    extractor has created their rows."""
    counts: Counter[str] = Counter()
    for run_id in run_ids:
        try:
            counts[(await engine.get_run(project, run_id)).status.value] += 1
        except NotFound:
            counts["missing"] += 1
    return counts


async def wait_all(
    engine: Engine, project: str, run_ids: list[str], timeout: float, status: str = "completed"
) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        counts = await statuses(engine, project, run_ids)
        if counts[status] == len(run_ids):
            return
        assert asyncio.get_running_loop().time() < deadline, counts
        await asyncio.sleep(0.2)


async def memories(engine: Engine, project: str, user: str, limit: int = 100) -> list[Memory]:
    request = ListRequest.model_validate({"group": "kt", "user_id": user, "limit": limit})
    found, _ = await engine.list_memories(project, request)
    return found
