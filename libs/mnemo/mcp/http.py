"""Streamable HTTP on the gateway at `/mcp`, behind the same API keys as the REST routes.

Every request is authenticated like a REST call (a missing, unknown or revoked key or
OAuth token gets a 401 problem whose WWW-Authenticate names the Protected Resource
Metadata when OAuth is configured); its tools then act within the credential's grant through an `EngineClient` on the
gateway's Engine, the facade the REST routes call. The SDK runs stateless: each request
stands alone, so any gateway process can answer any request and none keeps session state.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from mcp.server.context import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import HTTPConnection
from starlette.types import Receive, Scope, Send

from mnemo.api.deps import grant_of_connection
from mnemo.api.oauth.resource import Credentials
from mnemo.api.problems import Unauthorized, problem_response
from mnemo.client.engine_client import EngineClient
from mnemo.domain.grants import Grant
from mnemo.mcp.server import build_server

if TYPE_CHECKING:
    from mnemo.core.engine import Engine
    from mnemo.settings import Settings

PATH = "/mcp"
_GRANT = "mnemo.mcp.grant"  # ASGI scope key: what the request's credential may do


def _rebinding_checks(settings: Settings) -> TransportSecuritySettings | None:
    """Without keys (auth disabled, loopback only) the SDK refuses foreign Host and Origin
    headers, so a web page cannot reach the server through DNS rebinding. With keys, such a
    page has no key to send; checking would only refuse reverse proxies keeping their Host."""
    if settings.auth_disabled:
        return None  # the SDK's loopback defaults
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


class McpEndpoint:
    """The ASGI app mounted at PATH; `running()` belongs in the gateway's lifespan."""

    def __init__(
        self,
        settings: Settings,
        engine: Callable[[], Engine],
        credentials: Credentials | None = None,
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._credentials = credentials or Credentials(settings, engine)
        server = build_server(self._client_for)
        # Builds the SDK's session manager; its own Starlette app is not used.
        server.streamable_http_app(
            stateless_http=True,
            host=settings.host,
            transport_security=_rebinding_checks(settings),
            max_request_body_size=settings.max_body_bytes,
        )
        self._sessions = server.session_manager

    def running(self) -> AbstractAsyncContextManager[None]:
        return self._sessions.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection = HTTPConnection(scope)
        try:
            grant = await grant_of_connection(connection, self._settings, self._credentials)
        except Unauthorized as exc:
            challenge = self._credentials.challenge("invalid_token")
            refusal = problem_response(401, str(exc), headers={"WWW-Authenticate": challenge})
            await refusal(scope, receive, send)
            return
        await self._sessions.handle_request({**scope, _GRANT: grant}, receive, send)

    def _client_for(self, ctx: ServerRequestContext[Any, Any]) -> EngineClient:
        request = ctx.request
        if request is None or _GRANT not in request.scope:
            raise RuntimeError("an MCP request reached mnemo without passing its key check")
        grant: Grant = request.scope[_GRANT]
        return EngineClient(self._engine(), grant=grant)
