"""Engram v1 run status, plus mnemo's `?wait=` long poll and retry extensions."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from mnemo.api.deps import GrantedDep
from mnemo.api.schemas import RunOut

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
async def get_run(run_id: str, granted: GrantedDep, wait: WaitQuery = None) -> RunOut:
    """A run's status and the memory operations it committed."""
    run = await granted.get_run(run_id, wait)  # 404 outside the grant's user
    return RunOut.model_validate(run, from_attributes=True)


@router.post("/{run_id}/retry", response_model=RunOut, tags=["mnemo extensions"])
async def retry_run(run_id: str, granted: GrantedDep) -> RunOut:
    """mnemo extension: re-drive a failed run from its kept input (409 unless failed)."""
    run = await granted.retry_run(run_id)
    return RunOut.model_validate(run, from_attributes=True)
