"""mnemo extension: the key's project at a glance (what `mnemo status` shows beside the
unauthenticated /readyz and /metrics): its latest failed runs with their errors."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from mnemo.api.deps import GrantedDep
from mnemo.api.schemas import ProjectStatus

router = APIRouter(prefix="/v1/status", tags=["mnemo extensions"])


@router.get("", response_model=ProjectStatus)
async def project_status(
    granted: GrantedDep,
    failures: Annotated[int, Query(ge=0, le=50, description="How many failed runs")] = 5,
) -> ProjectStatus:
    """The key's project and its latest failed runs, newest first, with their errors."""
    failed = await granted.failed_runs(failures)
    return ProjectStatus.of(granted.project, failed)
