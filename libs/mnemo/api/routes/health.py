"""Engram's `GET /health`, and mnemo's liveness, readiness and metrics; none needs a key."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import text

from mnemo.api.deps import EngineDep
from mnemo.api.exposition import exposition
from mnemo.api.problems import problem_response
from mnemo.api.schemas import EngramHealth, Health

router = APIRouter()


@router.get("/health", response_model=EngramHealth, tags=["health"])
async def health() -> EngramHealth:
    """Engram's service health: the process is up. Unauthenticated, outside `/v1`."""
    return EngramHealth(status="healthy", service="mnemo")


@router.get("/healthz", response_model=Health, tags=["mnemo extensions"])
async def healthz() -> Health:
    """The process is up."""
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Health,
    responses={503: {"description": "DB or the pipeline's queue (Kafka broker) unreachable"}},
    tags=["mnemo extensions"],
)
async def readyz(engine: EngineDep) -> Health | Response:
    """The database answers, and so does the pipeline's queue (the broker, distributed)."""
    try:
        async with engine.db.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:  # any failure means "not ready"
        return problem_response(503, f"database unreachable: {type(exc).__name__}")
    if (reason := await engine.transport.unavailable()) is not None:
        return problem_response(503, reason)
    return Health(status="ready")


@router.get("/metrics", response_class=Response, tags=["mnemo extensions"])
async def metrics() -> Response:
    """Prometheus exposition of the engine's and gateway's metrics."""
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST)
