"""Long-lived requests get a bounded pool of their own, per key, apart from the in-flight cap.

`GET /mcp` (an event stream that, on a stateless server, never carries an event) and run
waits (`GET /v1/runs/{id}?wait=`) hold their connection for long. Counted with ordinary
requests, a few hundred of them took all of MNEMO_MAX_INFLIGHT_REQUESTS. Here each key
may hold MNEMO_STREAMS_PER_KEY of them at once (429 past that) and the server
MNEMO_MAX_STREAMS (503), both with Retry-After; the in-flight cap does not count them. An
event stream that sends nothing but keep-alive comments for MNEMO_STREAM_IDLE_SECONDS is
ended (clients reconnect when they need to).
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.api.authenticate import SCOPE_KEY
from mnemo.api.problems import problem_response

SCOPE_STREAM = "mnemo.stream"  # set on requests this pool counts; the in-flight cap skips them
RETRY_AFTER_SECONDS = 5


def is_stream(scope: Scope) -> bool:
    """`GET /mcp`, or `GET /v1/runs/{id}` with a positive `wait`."""
    if scope["type"] != "http" or scope["method"] != "GET":
        return False
    path = scope["path"]
    if path == "/mcp":
        return True
    if not path.startswith("/v1/runs/"):
        return False
    query = scope.get("query_string", b"").decode("latin-1")
    for name, value in parse_qsl(query):
        if name == "wait":
            try:
                return float(value) > 0
            except ValueError:
                return False  # the route answers the bad value with a 422
    return False


def _only_comments(body: bytes) -> bool:
    """An event-stream chunk holding only comments (`: ping`), i.e. a keep-alive."""
    lines = [line for line in body.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith(b":") for line in lines)


class StreamPool:
    """Pure ASGI middleware; sits inside `Authenticate`, which names the key."""

    def __init__(self, app: ASGIApp, per_key: int, total: int, idle_seconds: float) -> None:
        self.app = app
        self.per_key = per_key
        self.total = total
        self.idle_seconds = idle_seconds
        self.open: dict[str, int] = {}

    @property
    def in_use(self) -> int:
        return sum(self.open.values())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not is_stream(scope):
            await self.app(scope, receive, send)
            return
        key = scope.get(SCOPE_KEY, "")
        refusal = self._refusal(key)
        if refusal is not None:
            status, detail = refusal
            headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
            await problem_response(status, detail, headers=headers)(scope, receive, send)
            return
        self.open[key] = self.open.get(key, 0) + 1
        scope[SCOPE_STREAM] = True
        try:
            await self._serve(scope, receive, send)
        finally:
            self.open[key] -= 1
            if not self.open[key]:
                del self.open[key]

    def _refusal(self, key: str) -> tuple[int, str] | None:
        if self.in_use >= self.total:
            return 503, (
                f"the server holds {self.in_use} long-lived requests (event streams, run "
                "waits), its limit (MNEMO_MAX_STREAMS); retry shortly"
            )
        if self.open.get(key, 0) >= self.per_key:
            return 429, (
                f"this key holds {self.per_key} long-lived requests (event streams, run "
                "waits), its limit (MNEMO_STREAMS_PER_KEY); close one or retry later"
            )
        return None

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        last_event = loop.time()
        started = finished = False

        async def watched_send(message: Message) -> None:
            nonlocal last_event, started, finished
            if message["type"] == "http.response.start":
                started = True
                last_event = loop.time()
            elif message["type"] == "http.response.body":
                finished = finished or not message.get("more_body", False)
                if not _only_comments(message.get("body", b"")):
                    last_event = loop.time()
            await send(message)

        task = asyncio.ensure_future(self.app(scope, receive, watched_send))
        try:
            while not task.done():
                left = last_event + self.idle_seconds - loop.time()
                if started and not finished and left <= 0:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                    if not finished:  # end the stream cleanly: the client sees its end
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
                # Before the response starts (a run wait) there is nothing to time; look
                # again an idle period later, as a stream may have started meanwhile.
                await asyncio.wait(
                    (task,), timeout=max(left, 0.05) if started else self.idle_seconds
                )
            task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
