"""Engram v1 run status, plus mnemo's `?wait=` long poll and retry extensions."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from mnemo.api.deps import EngineDep, GrantDep
from mnemo.api.schemas import RunOut
from mnemo.core.access import visible_run
from mnemo.domain.grants import require_write

router = APIRouter(prefix="/v1/runs", tags=["runs"])

MAX_WAIT_SECONDS = 60.0

WaitQuery = Annotated[
    float | None,
    Query(
        ge=0,
        le=MAX_WAIT_SECONDS,
        description=(
            "mnemo extension: long-poll up to this many seconds for the run to complete or "
            "fail; the response is the run as it stands when the wait ends."
        ),
    ),
]


@router.get("/{run_id}", response_model=RunOut)
async def get_run(
    run_id: str, engine: EngineDep, grant: GrantDep, wait: WaitQuery = None
) -> RunOut:
    """A run's status and the memory operations it committed."""
    run = await visible_run(engine, grant, run_id)  # 404 outside the grant's user
    if wait:
        run = await engine.wait_run(grant.project, run_id, wait)
    return RunOut.model_validate(run, from_attributes=True)


@router.post("/{run_id}/retry", response_model=RunOut, tags=["mnemo extensions"])
async def retry_run(run_id: str, engine: EngineDep, grant: GrantDep) -> RunOut:
    """mnemo extension: re-drive a failed run from its kept input (409 unless failed)."""
    require_write(grant, "retry a run")
    await visible_run(engine, grant, run_id)
    run = await engine.retry_run(grant.project, run_id)
    return RunOut.model_validate(run, from_attributes=True)
