"""Refuse a request whose body does not arrive in time with a 408 problem, and close it.

uvicorn waits for a request body as long as the client keeps the connection open, so a
client sending a byte now and then held a request slot (and a connection) for minutes.
The whole body must arrive within `seconds` of the request head (MNEMO_BODY_TIMEOUT_SECONDS).
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.api.body_guard import BodyRefused, serve_guarded


class BodyTimedOut(BodyRefused):
    """Raised from `receive` when the body is late; the connection is closed after."""

    def __init__(self, seconds: float) -> None:
        super().__init__(408, _detail(seconds), headers={"Connection": "close"})


def _detail(seconds: float) -> str:
    return (
        f"the request body did not arrive within {seconds:g} s "
        "(MNEMO_BODY_TIMEOUT_SECONDS); send it in one go"
    )


def _has_body(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False


class BodyReadTimeout:
    """Pure ASGI middleware; times only the reads of the body itself (a streaming
    response's later wait for the client's disconnect is not timed)."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        complete = False

        async def timed_receive() -> Message:
            nonlocal complete
            if complete:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise BodyTimedOut(self.seconds) from None
            complete = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        await serve_guarded(self.app, scope, receive, send, timed_receive)
