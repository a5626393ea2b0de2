"""Refuse requests beyond `max_inflight` in progress with a 503 problem, at once.

Past that many requests in progress (MNEMO_MAX_INFLIGHT_REQUESTS), more would only queue
for the event loop, the connection pool and the CPU, and every request would get slower.
Liveness, readiness and metrics are exempt, so probes still see the truth under load, and
so are long-lived requests, which `StreamPool` counts in a pool of their own.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.api.problems import problem_response
from mnemo.api.streams import SCOPE_STREAM

EXEMPT_PATHS = frozenset({"/health", "/healthz", "/readyz", "/metrics"})
RETRY_AFTER_SECONDS = 1


class InFlightLimit:
    """Pure ASGI middleware counting requests from their start to their last byte."""

    def __init__(self, app: ASGIApp, max_inflight: int) -> None:
        self.app = app
        self.max_inflight = max_inflight
        self.inflight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT_PATHS or SCOPE_STREAM in scope:
            await self.app(scope, receive, send)
            return
        if self.inflight >= self.max_inflight:
            response = problem_response(
                503,
                f"the server has {self.inflight} requests in progress, its limit "
                "(MNEMO_MAX_INFLIGHT_REQUESTS); retry shortly",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
            await response(scope, receive, send)
            return
        self.inflight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.inflight -= 1
