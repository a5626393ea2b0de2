"""Engram v1 key verification."""

from __future__ import annotations

from fastapi import APIRouter, Response

from mnemo.api.deps import GrantDep

router = APIRouter(prefix="/v1/auth", tags=["auth"])


@router.get("/verify", status_code=204, response_class=Response)
async def verify_key(grant: GrantDep) -> Response:
    """204 when the bearer key is valid, 401 otherwise."""
    del grant
    return Response(status_code=204)
