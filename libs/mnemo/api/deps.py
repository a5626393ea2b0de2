"""FastAPI dependencies: the engine, the settings and the caller's grant (from its key or
token: project, read-only, bound user)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.requests import HTTPConnection
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from mnemo.api.authenticate import SCOPE_GRANT
from mnemo.api.oauth.resource import Credentials
from mnemo.api.problems import Unauthorized
from mnemo.core.engine import Engine
from mnemo.core.granted import Granted
from mnemo.domain.grants import Grant
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


async def grant_of_connection(
    connection: HTTPConnection, settings: Settings, credentials: Credentials
) -> Grant:
    """What the request's credential may do: its project, whether it may write, the one
    user it may see. The `Authenticate` middleware put it in the scope; without it (an
    app mounted without the middleware) the bearer secret is resolved here."""
    checked: Grant | None = connection.scope.get(SCOPE_GRANT)
    if checked is not None:
        return checked
    if settings.auth_disabled:
        return Grant(settings.project)
    bearer = await _bearer(connection)
    if bearer is None:
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    grant = await credentials.grant_for(bearer.credentials)
    if grant is None:
        raise Unauthorized("invalid or revoked API key")
    return grant


async def get_grant(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Grant:
    del credentials  # declared for the OpenAPI document's security scheme
    state = request.app.state
    return await grant_of_connection(request, state.settings, state.credentials)


GrantDep = Annotated[Grant, Depends(get_grant)]


async def get_granted(engine: EngineDep, grant: GrantDep) -> Granted:
    return Granted(engine, grant)


# The engine as the caller's credential may use it (mnemo.core.granted).
GrantedDep = Annotated[Granted, Depends(get_granted)]
