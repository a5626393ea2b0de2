"""The one body reader both body limits use: a refusal raised while reading is answered
as a problem document before the response starts, and propagates after."""

from __future__ import annotations

import json

import pytest
from starlette.types import Message, Receive, Scope, Send

from mnemo.api.body_guard import serve_guarded
from mnemo.api.body_timeout import BodyTimedOut
from mnemo.api.limits import BodyTooLarge

SCOPE: Scope = {"type": "http", "method": "POST", "path": "/", "headers": []}


async def _receive() -> Message:
    return {"type": "http.request", "body": b"x", "more_body": False}


def _refusing(error: Exception):  # type: ignore[no-untyped-def]
    async def guarded() -> Message:
        raise error

    return guarded


async def _reads_body(scope: Scope, receive: Receive, send: Send) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})


async def _streams_then_reads(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await receive()


@pytest.mark.parametrize(
    ("error", "status", "closes"), [(BodyTooLarge(10), 413, False), (BodyTimedOut(2.0), 408, True)]
)
async def test_a_refusal_before_the_response_is_its_problem_document(
    error: Exception, status: int, closes: bool
) -> None:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await serve_guarded(_reads_body, SCOPE, _receive, send, _refusing(error))
    start, body = sent[0], sent[1]
    headers = dict(start["headers"])
    assert start["status"] == status
    assert headers[b"content-type"] == b"application/problem+json"
    assert (headers.get(b"connection") == b"close") == closes
    assert json.loads(body["body"])["status"] == status


async def test_a_refusal_after_the_response_started_propagates() -> None:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    with pytest.raises(BodyTooLarge):
        await serve_guarded(_streams_then_reads, SCOPE, _receive, send, _refusing(BodyTooLarge(1)))
    assert [m["type"] for m in sent] == ["http.response.start"]  # no second response
