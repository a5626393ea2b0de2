"""The gateway application: Engram v1 REST API (plus documented mnemo extensions)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.telemetry import TelemetryConfig
from starlette.routing import Route

from mnemo.api.api_docs import install_api_docs
from mnemo.api.authenticate import Authenticate
from mnemo.api.body_timeout import BodyReadTimeout
from mnemo.api.host_guard import LOOPBACK_HOSTS, LoopbackHostOnly
from mnemo.api.inflight import InFlightLimit
from mnemo.api.json_guard import JsonGuard
from mnemo.api.limits import BodySizeLimit
from mnemo.api.oauth.resource import Credentials, oauth_routes
from mnemo.api.problems import install_problem_handlers
from mnemo.api.routes import auth, groups, health, memories, runs, status, transfer, users
from mnemo.api.streams import StreamPool
from mnemo.api.text_guard import reject_bad_parameters
from mnemo.api.tracing import TraceContext
from mnemo.console import install_console
from mnemo.console.sampler import sampling
from mnemo.core.engine import Engine
from mnemo.core.readiness import LocalWorkers
from mnemo.errors import MnemoError
from mnemo.mcp.http import PATH as MCP_PATH
from mnemo.mcp.http import McpEndpoint
from mnemo.settings import Settings
from mnemo.tracing import spans

_NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}

DESCRIPTION = """\
A drop-in replacement for the Engram v1 REST API: the `weaviate-engram` SDK works by
changing only `base_url` and `api_key`. Every error is an RFC 7807
`application/problem+json` document. Engram's own operations include `POST
/v1/memories/list` and the unauthenticated `GET /health`. Operations tagged **mnemo
extensions** are not part of Engram v1: history, provenance, hard erase, user erasure, run
long-poll (`?wait=`) and retry, group configuration, idempotent adds, cursor paging, export
and import, `/healthz`, `/readyz` and metrics. MCP
clients connect to `/mcp` (Streamable HTTP, the same bearer keys). The operator console is
served at `/console`.
"""


class UnsafeConfiguration(MnemoError, RuntimeError):
    """Settings that would expose an unauthenticated API beyond this machine."""


EngineStarter = Callable[[Settings], Awaitable[Engine]]


def create_app(
    settings: Settings,
    engine: Engine | None = None,
    start_engine: EngineStarter | None = None,
    local_workers: LocalWorkers | None = None,
) -> FastAPI:
    """The gateway, serving `engine`; without one, the app starts its own with
    `start_engine` (an entry point's choice of transport) and closes it in its lifespan.
    `local_workers`: the worker processes this server supervises, which /readyz consults."""
    if settings.auth_disabled and settings.host not in LOOPBACK_HOSTS:
        raise UnsafeConfiguration(
            f"auth_disabled requires a loopback host (got {settings.host!r}); "
            "create a key with `mnemo keys create` instead"
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = engine is None
        if engine is None and start_engine is None:
            raise RuntimeError("create_app needs an engine or a start_engine function")
        app.state.engine = engine or await start_engine(settings)  # type: ignore[misc]
        try:
            async with mcp.running(), sampling(app, settings.console_sample_seconds):
                yield
        finally:
            if owned:
                await app.state.engine.close()

    app = FastAPI(
        title="mnemo",
        version="1.0.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        dependencies=[Depends(reject_bad_parameters)],
        # served from packaged assets by install_api_docs: no CDN, so they work offline
        docs_url=None,
        redoc_url=None,
        # FastAPI's own HTTP telemetry follows mnemo's tracing (OTEL_* variables, read before
        # the app is built). Left unconfigured, FastAPI asks the environment on every
        # request whether a provider has appeared since: ~4% of the server's CPU at 500
        # adds/s (py-spy, bench section 1).
        telemetry=None if spans.active() else _NO_TELEMETRY,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.local_workers = local_workers
    for module in (memories, runs, groups, auth, users, transfer, health, status):
        app.include_router(module.router)
    install_console(app)
    install_api_docs(app)
    credentials = Credentials(settings, lambda: app.state.engine)
    app.state.credentials = credentials
    app.router.routes.extend(oauth_routes(settings, credentials))
    mcp = McpEndpoint(settings, lambda: app.state.engine, credentials)
    # A plain Route: an ASGI endpoint, outside FastAPI's validation and OpenAPI schema.
    app.router.routes.append(Route(MCP_PATH, mcp, include_in_schema=False))
    install_problem_handlers(app)
    # Outermost last. The Host check and the key check come first, on the request head
    # alone, before any capacity is taken or any body byte read; then the pools (streams,
    # other requests), then the body's deadline, its size cap and the JSON checks.
    app.add_middleware(JsonGuard)
    app.add_middleware(BodySizeLimit, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(BodyReadTimeout, seconds=settings.body_timeout_seconds)
    app.add_middleware(InFlightLimit, max_inflight=settings.max_inflight_requests)
    app.add_middleware(
        StreamPool,
        per_key=settings.streams_per_key,
        total=settings.max_streams,
        idle_seconds=settings.stream_idle_seconds,
    )
    app.add_middleware(Authenticate, settings=settings, credentials=lambda: credentials)
    if settings.auth_disabled:
        app.add_middleware(LoopbackHostOnly, configured_host=settings.host)
    app.add_middleware(TraceContext)
    return app
