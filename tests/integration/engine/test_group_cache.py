"""The group cache: concurrent misses share one database lookup."""

from __future__ import annotations

import asyncio
import logging

import pytest

from mnemo.core.engine import Engine
from mnemo.core.groups import GroupCache
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import NotFound
from mnemo.store import groups as group_store

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


async def test_the_default_template_shapes_only_a_new_default_group(
    engine: Engine, project: str, caplog: pytest.LogCaptureFixture
) -> None:
    quickstart = GroupCache(engine.database.db, engine.deps.clock, "engram_quickstart")
    with caplog.at_level(logging.INFO, logger="mnemo.core.groups"):
        group, created = await quickstart.ensure_default(project)
    assert created and group.template == "engram_quickstart"
    assert f"project '{project}': created the default group" in caplog.text
    assert (await engine.group(project, "default")).has_topic("DeveloperPreferences")

    other = f"{project}-kept"
    await engine.put_group(other, "default", {"template": "personalization"})
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mnemo.core.groups"):
        kept = await quickstart.get(other, "default")
        await quickstart.get(other, "default")
    assert kept.template == "personalization"
    assert caplog.text.count("kept the existing default group (template 'personalization')") == 1
    assert "template 'engram_quickstart' applies only" in caplog.text


async def test_a_group_stored_after_the_cached_copy_is_loaded_again(
    engine: Engine, project: str
) -> None:
    """Another process (the gateway) changed the group within the TTL: a caller that read
    when the group was last stored (a run's row) gets the group as stored, not the copy."""
    elsewhere = GroupCache(engine.database.db, engine.deps.clock)
    await engine.put_group(project, "notes", {"template": "personalization"})
    cached = await elsewhere.get(project, "notes")
    await engine.put_group(project, "notes", {"template": "engram_quickstart"})
    async with engine.database.db.connect() as conn:
        stamped = await group_store.get_stamped(conn, project, "notes")
    assert stamped is not None
    stored_at = stamped[1]
    assert (await elsewhere.get(project, "notes")) == cached  # within the TTL, unasked
    fresh = await elsewhere.get(project, "notes", stored_at)
    assert fresh.template == "engram_quickstart" != cached.template
    assert (await elsewhere.get(project, "notes", stored_at)) is fresh  # cached again
