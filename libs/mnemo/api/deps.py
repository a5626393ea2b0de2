"""FastAPI dependencies: the engine, the settings and the caller's project (from the key)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.requests import HTTPConnection
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from mnemo.api.authenticate import SCOPE_PROJECT
from mnemo.api.problems import Unauthorized
from mnemo.core.engine import Engine
from mnemo.settings import Settings

_bearer = HTTPBearer(auto_error=False, description="A mnemo API key: `Bearer mnemo_...`")


# Dependencies are `async def` on purpose: FastAPI runs a plain `def` dependency in a
# thread pool, a thread hop per request that cost the gateway half its add throughput.
async def get_engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


EngineDep = Annotated[Engine, Depends(get_engine)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


async def project_for_secret(engine: Engine, settings: Settings, secret: str | None) -> str:
    """The project a bearer key belongs to; Unauthorized for a missing, unknown or revoked key.

    With `auth_disabled` (loopback only) every request acts on `settings.project`. The REST
    routes and the MCP endpoint both authenticate here.
    """
    if settings.auth_disabled:
        return settings.project
    if not secret:
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    project = await engine.project_for_key(secret)
    if project is None:
        raise Unauthorized("invalid or revoked API key")
    return project


async def get_project(
    request: Request,
    engine: EngineDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The project the bearer key belongs to; 401 for a missing, unknown or revoked key.
    The `Authenticate` middleware has normally checked the key already, before the body
    was read, and left the project in the scope."""
    checked: str | None = request.scope.get(SCOPE_PROJECT)
    if checked is not None:
        return checked
    return await project_for_secret(
        engine, settings, credentials.credentials if credentials else None
    )


ProjectDep = Annotated[str, Depends(get_project)]


async def project_of_connection(
    connection: HTTPConnection, engine: Engine, settings: Settings
) -> str:
    """`get_project` outside FastAPI's routing (the MCP endpoint is a plain ASGI app)."""
    checked: str | None = connection.scope.get(SCOPE_PROJECT)
    if checked is not None:
        return checked
    credentials = await _bearer(connection)
    return await project_for_secret(
        engine, settings, credentials.credentials if credentials else None
    )
