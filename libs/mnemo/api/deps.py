"""FastAPI dependencies: the engine, the settings and the caller's project (from the key)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

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


async def get_project(
    engine: EngineDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The project the bearer key belongs to; 401 for a missing, unknown or revoked key.

    With `auth_disabled` (loopback only) every request acts on `settings.project`.
    """
    if settings.auth_disabled:
        return settings.project
    if credentials is None or not credentials.credentials:
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    project = await engine.project_for_key(credentials.credentials)
    if project is None:
        raise Unauthorized("invalid or revoked API key")
    return project


ProjectDep = Annotated[str, Depends(get_project)]
