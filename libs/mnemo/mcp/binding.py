"""Which mnemo client a tool call talks to, bound per MCP request by server middleware.

Tools and resources are written once against the client API (`memories`, `runs`, `groups`):
over stdio it is an `AsyncMnemoClient` for the remote server; on the gateway, an
`EngineClient` on the gateway's Engine for the project of the request's API key.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeAlias

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext

if TYPE_CHECKING:
    from mnemo.client.aio import AsyncMnemoClient

# Over HTTP or in-process (`EngineClient` is an `AsyncMnemoClient` on another transport).
MemoryClient: TypeAlias = "AsyncMnemoClient"
ClientResolver = Callable[[ServerRequestContext[Any, Any]], MemoryClient]

_client: ContextVar[MemoryClient] = ContextVar("mnemo_mcp_client")


def current_client() -> MemoryClient:
    """The client bound to the MCP request being handled."""
    try:
        return _client.get()
    except LookupError:
        raise RuntimeError("no mnemo client is bound to this MCP request") from None


def bind_client(resolve: ClientResolver) -> ServerMiddleware[Any]:
    """Middleware binding `resolve(ctx)` for the rest of the request (handlers run inside it)."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        token = _client.set(resolve(ctx))
        try:
            return await call_next(ctx)
        finally:
            _client.reset(token)

    return middleware
