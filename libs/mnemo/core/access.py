"""Reads that depend on what a credential may see (`mnemo.domain.grants`), written once
for the REST routes, the MCP tools and the console."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemo.domain.grants import Grant, may_see_user
from mnemo.domain.requests import NotFound

if TYPE_CHECKING:
    from mnemo.core.engine import Engine
    from mnemo.domain.memory import Run


async def visible_run(engine: Engine, grant: Grant, run_id: str) -> Run:
    """The run, or NotFound when it is outside the grant's project or user (never saying
    which: a user-bound credential learns nothing of other users' runs)."""
    run = await engine.get_run(grant.project, run_id)
    if not may_see_user(grant, run.user_id):
        raise NotFound(f"run '{run_id}' not found")
    return run
