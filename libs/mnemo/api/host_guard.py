"""With auth disabled, answer only requests addressed to this machine by name.

A keyless server on 127.0.0.1 is still reachable from a browser through DNS rebinding: a
page on `evil.example` re-points that name at 127.0.0.1 and its scripts then call the API
as a same-origin site. Their requests carry `Host: evil.example`, so checking the Host
header against loopback names (and the configured host) closes that path.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.api.problems import problem_response

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(header: str) -> str:
    """The name part of a Host header: `[::1]:8080` -> `::1`, `Localhost:80` -> `localhost`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class LoopbackHostOnly:
    """Pure ASGI middleware: 421 for an HTTP request whose Host names another machine."""

    def __init__(self, app: ASGIApp, configured_host: str) -> None:
        self.app = app
        self.allowed = LOOPBACK_HOSTS | {host_name(configured_host)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers", ()))
            raw = headers.get(b"host", b"").decode("latin-1")
            if host_name(raw) not in self.allowed:
                shown = raw if raw.isprintable() else raw.encode("unicode_escape").decode()
                detail = (
                    f"Host {shown!r} is not this server: with auth disabled only loopback "
                    "names are accepted (localhost, 127.0.0.1, [::1]); create a key with "
                    "`mnemo keys create` to serve other names"
                )
                await problem_response(421, detail)(scope, receive, send)
                return
        await self.app(scope, receive, send)
