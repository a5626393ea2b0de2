"""Engram v1 key verification."""

from __future__ import annotations

from fastapi import APIRouter, Response

from mnemo.api.deps import ProjectDep

router = APIRouter(prefix="/v1/auth", tags=["auth"])


@router.get("/verify", status_code=204, response_class=Response)
async def verify_key(project: ProjectDep) -> Response:
    """204 when the bearer key is valid, 401 otherwise."""
    del project
    return Response(status_code=204)
