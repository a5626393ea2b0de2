"""Guarding the reads of a request body, written once for the body's limits (size in
`api.limits`, time in `api.body_timeout`).

A guard wraps the app's `receive` and raises a `BodyRefused` when the body breaks its
limit. Raised before the response started, the refusal's problem document is the answer;
raised after (a route streaming while it reads), it propagates and the server closes the
connection, since no second response can be sent.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.api.problems import problem_response


class BodyRefused(HTTPException):
    """A body that broke a limit; an HTTPException, so a route's handler answers it the same
    way when the route itself reads the body."""

    def __init__(self, status: int, detail: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status, detail, headers=dict(headers) if headers else None)

    async def answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = problem_response(self.status_code, self.detail, headers=self.headers)
        await refusal(scope, receive, send)


async def serve_guarded(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, guarded: Receive
) -> None:
    """Run `app` reading its body through `guarded`; answer a refusal it raises while no
    response has started (`receive` is the unguarded one, for the refusal's own use)."""
    started = False

    async def tracking_send(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, guarded, tracking_send)
    except BodyRefused as refused:
        if started:
            raise
        await refused.answer(scope, receive, send)
