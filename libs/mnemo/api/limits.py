"""Refuse request bodies over `max_body_bytes` with a 413 problem, before anything parses them.

Checks the declared Content-Length first, then counts streamed (e.g. chunked) bytes.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.api.body_guard import BodyRefused, serve_guarded


class BodyTooLarge(BodyRefused):
    """Raised from `receive` mid-stream, or for a declared length over the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body exceeds the limit of {limit} bytes")


class BodySizeLimit:
    """Pure ASGI middleware, so it also caps bodies that arrive without a Content-Length."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._declared_length(scope) > self.max_body_bytes:
            await BodyTooLarge(self.max_body_bytes).answer(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge(self.max_body_bytes)
            return message

        await serve_guarded(self.app, scope, receive, send, counting_receive)

    @staticmethod
    def _declared_length(scope: Scope) -> int:
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    return int(value)
                except ValueError:
                    return 0
        return 0
