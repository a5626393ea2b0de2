"""mnemo extension: the key's project at a glance (what `mnemo status` shows beside the
unauthenticated /readyz and /metrics): its latest failed runs with their errors."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from mnemo.api.deps import EngineDep, GrantDep
from mnemo.api.schemas import ProjectStatus, RunFailure
from mnemo.domain.grants import require_project_wide
from mnemo.domain.memory import RunState

router = APIRouter(prefix="/v1/status", tags=["mnemo extensions"])


@router.get("", response_model=ProjectStatus)
async def project_status(
    engine: EngineDep,
    grant: GrantDep,
    failures: Annotated[int, Query(ge=0, le=50, description="How many failed runs")] = 5,
) -> ProjectStatus:
    """The key's project and its latest failed runs, newest first, with their errors."""
    require_project_wide(grant, "read the project's status")
    project = grant.project
    failed = await engine.list_runs(project, status=RunState.failed, limit=failures)
    return ProjectStatus(
        project=project,
        recent_failures=[RunFailure.model_validate(r, from_attributes=True) for r in failed],
    )
