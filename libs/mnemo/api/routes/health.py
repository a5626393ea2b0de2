"""Engram's `GET /health`, and mnemo's liveness, readiness and metrics; none needs a key."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from mnemo.api.deps import EngineDep
from mnemo.api.exposition import exposition
from mnemo.api.problems import ProblemError, problem_response
from mnemo.api.schemas import EngramHealth, Health, Readiness, ReadinessCheck, WorkerHeartbeat
from mnemo.core import readiness as checks
from mnemo.core.transport import RETRY_AFTER_SECONDS

router = APIRouter()


@router.get("/health", response_model=EngramHealth, tags=["health"])
async def health() -> EngramHealth:
    """Engram's service health: the process is up. Unauthenticated, outside `/v1`."""
    return EngramHealth(status="healthy", service="mnemo")


@router.get("/healthz", response_model=Health, tags=["mnemo extensions"])
async def healthz() -> Health:
    """The process is up (liveness; what it depends on is /readyz's business)."""
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"description": "a check failed: the problem names it (Retry-After)"}},
    tags=["mnemo extensions"],
)
async def readyz(engine: EngineDep, request: Request) -> Readiness | Response:
    """Ready when the database (and in distributed mode the broker) answers, a pipeline
    worker of each kind has a fresh heartbeat, and the configured LLM and embedding
    endpoints answer (`mnemo serve`'s checks, advisory: named, never unready for them);
    reports the oldest running run's age."""
    report = await checks.readiness(
        engine.db,
        engine.transport,
        engine.settings.heartbeat_timeout_seconds,
        getattr(request.app.state, "local_workers", None),
        engine.write_health,
    )
    endpoints = getattr(request.app.state, "endpoint_checks", None)
    if endpoints is not None:  # the configured LLM and embedder (mnemo.core.endpoints)
        report.checks += await endpoints.current()
    body = Readiness(
        checks=[
            ReadinessCheck(name=c.name, ok=c.ok, detail=c.detail, advisory=c.advisory)
            for c in report.checks
        ],
        workers=[
            WorkerHeartbeat(
                worker_id=w.worker_id,
                role=w.role,
                host=w.host,
                pid=w.pid,
                heartbeat_age_seconds=round(w.age_seconds, 3),
            )
            for w in report.workers
        ],
        oldest_running_run_age_seconds=report.oldest_running_run_age_seconds,
    )
    if report.ready:
        return body
    failed = [c for c in report.checks if not (c.ok or c.advisory)]
    return problem_response(
        503,
        "not ready: " + "; ".join(f"{c.name}: {c.detail}" for c in failed),
        [ProblemError(location=c.name, message=c.detail) for c in failed],
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        extensions=body.model_dump(mode="json", exclude={"status"}),
    )


@router.get("/metrics", response_class=Response, tags=["mnemo extensions"])
async def metrics(engine: EngineDep) -> Response:
    """Prometheus exposition: the pipeline's series from every process of this server
    (gateway and worker processes) and the queue's backlog, measured now."""
    return Response(await exposition(engine), media_type=CONTENT_TYPE_LATEST)
