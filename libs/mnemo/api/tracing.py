"""Continuing a caller's trace: an add whose request carries W3C `traceparent` headers
starts its run's trace as a child of the caller's span (agents that trace their own work see
mnemo's pipeline under it). Pure ASGI, so the context reaches the endpoint; a no-op while
tracing is off."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.tracing import spans

TRACE_HEADERS = (b"traceparent", b"tracestate")


class TraceContext:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not spans.active():
            await self.app(scope, receive, send)
            return
        carrier = {
            name.decode(): value.decode("latin-1")
            for name, value in scope.get("headers", [])
            if name in TRACE_HEADERS
        }
        if not carrier:
            await self.app(scope, receive, send)
            return
        with spans.continued(carrier):
            await self.app(scope, receive, send)
