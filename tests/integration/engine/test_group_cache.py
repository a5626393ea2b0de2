"""The group cache: concurrent misses share one database lookup."""

from __future__ import annotations

import asyncio

import pytest

from mnemo.core.engine import Engine
from mnemo.core.groups import GroupCache
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import NotFound

pytestmark = pytest.mark.integration


async def test_concurrent_lookups_of_an_expired_group_share_one_query(
    engine: Engine, project: str
) -> None:
    cache = GroupCache(engine.database.db, engine.deps.clock)
    loads = 0
    original = cache._load

    async def counting(project_: str, name: str) -> GroupConfig:
        nonlocal loads
        loads += 1
        return await original(project_, name)

    cache._load = counting  # type: ignore[method-assign]
    groups = await asyncio.gather(*(cache.get(project, "default") for _ in range(20)))
    assert loads == 1 and {g.name for g in groups} == {"default"}

    failures = await asyncio.gather(
        *(cache.get(project, "missing") for _ in range(5)), return_exceptions=True
    )
    assert loads == 2 and all(isinstance(f, NotFound) for f in failures)
