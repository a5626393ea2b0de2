"""Slow and keyless clients cannot hold the gateway: the key is checked from the request
head before the body is read, heads and bodies have deadlines, connections still sending a
head are capped, and long-lived requests have a per-key pool of their own.

Raw sockets play the slow clients. Every wait on the server is bounded by a socket timeout
far above the deadline under test, so the assertions are about what happens, not when.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

GUARD_SECONDS = 60  # a socket read this long means the server never answered


@pytest.fixture
def start(postgres: EmbeddedPostgres, tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    servers: list[LiveServer] = []
    llms: list[ScriptedLLMServer] = []

    def started(llm_delay: float = 0.0, **overrides: Any) -> LiveServer:
        llm = ScriptedLLMServer(echo=True, delay_seconds=llm_delay).__enter__()
        llms.append(llm)
        settings = gateway_settings(postgres.new_database(), tmp_path, **overrides)
        servers.append(LiveServer(settings, llm).start())
        return servers[-1]

    yield started
    for server in servers:
        server.stop()
    for llm in llms:
        llm.__exit__(None, None, None)


def connect(server: LiveServer) -> socket.socket:
    url = httpx.URL(server.url)
    sock = socket.create_connection((url.host, url.port))
    sock.settimeout(GUARD_SECONDS)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def head(method: str, path: str, key: str | None = None, length: int | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if key:
        lines.append(f"Authorization: Bearer {key}")
    if length is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {length}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def add(server: LiveServer, key: str, user: str = "u") -> httpx.Response:
    body = {"user_id": user, "input": {"string": {"content": [f"{user} likes tea"]}}}
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.post(f"{server.url}/v1/memories", json=body, headers=headers, timeout=30)


# -- the key before the body ------------------------------------------------------------


@pytest.mark.parametrize("key", [None, "mnemo_not-a-key"])
def test_a_request_without_a_valid_key_is_refused_before_its_body_is_sent(
    start: Callable[..., LiveServer], key: str | None
) -> None:
    server = start()
    with connect(server) as sock:
        # A 900 KB body is announced and never sent: the answer cannot depend on it.
        sock.sendall(head("POST", "/v1/memories/search", key, length=900_000))
        response = read_until_closed(sock)  # the server closes: the body stays unread
    assert status_of(response) == 401, response
    assert b"application/problem+json" in response and b"connection: close" in response
    assert b"WWW-Authenticate: Bearer".lower() in response.lower()


def test_a_keyless_mcp_request_is_refused_before_its_body_is_sent(
    start: Callable[..., LiveServer],
) -> None:
    server = start()
    with connect(server) as sock:
        sock.sendall(head("POST", "/mcp", None, length=500_000))
        assert status_of(read_until_closed(sock)) == 401


# -- deadlines --------------------------------------------------------------------------


def trickle(sock: socket.socket, data: bytes) -> bytes:
    """Send `data` a byte at a time (slowly) until the server answers and closes; the
    server's answer, or b"" if all of `data` went out unanswered."""
    sock.settimeout(0.3)
    received = b""
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except OSError:  # closed under us: the answer is in the buffer
            break
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:  # closed with our last byte unread: nothing more comes
            return received
        if not chunk:
            return received
        # The server answered: stop sending, or the next byte meets a closed socket and the
        # reset it provokes can discard the rest of the answer.
        received += chunk
        break
    sock.settimeout(GUARD_SECONDS)
    try:
        return received + read_until_closed(sock)
    except OSError:
        return received


def test_a_body_that_does_not_arrive_in_time_gets_408_and_the_connection_closes(
    start: Callable[..., LiveServer],
) -> None:
    server = start(body_timeout_seconds=1.0)
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    body = b'{"user_id": "u", "input": {"string": {"content": ["' + b"x" * 400 + b'"]}}}'
    with connect(server) as sock:
        sock.sendall(head("POST", "/v1/memories", key, length=len(body)))
        response = trickle(sock, body)
    assert status_of(response) == 408, response
    assert b"MNEMO_BODY_TIMEOUT_SECONDS" in response


def test_a_request_head_that_does_not_arrive_in_time_is_cut_off(
    start: Callable[..., LiveServer],
) -> None:
    server = start(header_timeout_seconds=1.0)
    request = head("GET", "/health") + b"X-Padding: " + b"y" * 400 + b"\r\n\r\n"
    with connect(server) as sock:
        response = trickle(sock, request)
    assert status_of(response) == 408, response
    with connect(server) as idle:  # a connection that never sends a byte
        assert status_of(read_until_closed(idle)) == 408
    # A connection that answered one request and then trickles the next head.
    with connect(server) as sock:
        sock.sendall(head("GET", "/health"))
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert status_of(trickle(sock, request)) == 408


def test_connections_still_sending_their_head_are_capped_oldest_first(
    start: Callable[..., LiveServer],
) -> None:
    server = start(max_unauthenticated_connections=4, header_timeout_seconds=600)
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    slow: list[socket.socket] = []
    try:
        for _ in range(10):
            slow.append(connect(server))
            slow[-1].sendall(b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            time.sleep(0.05)  # arrival order is the eviction order
        closed_at = []
        for index, sock in enumerate(slow[:6]):  # the six oldest made room
            assert status_of(read_until_closed(sock)) == 408
            closed_at.append(index)
        assert closed_at == list(range(6))
        # Authenticated requests still get through (each is briefly one of the four).
        assert add(server, key).status_code == 200
        assert httpx.get(f"{server.url}/healthz").status_code == 200
    finally:
        for sock in slow:
            sock.close()


# -- long-lived requests ------------------------------------------------------------------


def test_run_waits_have_a_pool_per_key_outside_the_in_flight_cap(
    start: Callable[..., LiveServer],
) -> None:
    server = start(llm_delay=30.0, max_inflight_requests=2, streams_per_key=2)
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    other = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    run_id = add(server, key).json()["run_id"]
    auth = {"Authorization": f"Bearer {key}"}
    held: list[int] = []

    def wait() -> None:
        polled = httpx.get(
            f"{server.url}/v1/runs/{run_id}", params={"wait": 8}, headers=auth, timeout=30
        )
        held.append(polled.status_code)

    waiters = [threading.Thread(target=wait) for _ in range(2)]
    for waiter in waiters:
        waiter.start()
    try:
        assert server.engine is not None
        for _ in range(400):
            if server.engine.run_watch.waiting == 2:
                break
            time.sleep(0.05)
        assert server.engine.run_watch.waiting == 2
        third = httpx.get(
            f"{server.url}/v1/runs/{run_id}", params={"wait": 8}, headers=auth, timeout=30
        )
        assert third.status_code == 429, third.text
        assert "MNEMO_STREAMS_PER_KEY" in third.json()["detail"]
        assert int(third.headers["retry-after"]) >= 1
        # The two waits take no in-flight slot (its cap is 2): adds and other keys go on.
        assert add(server, key, "u2").status_code == 200
        assert add(server, other, "u3").status_code == 200
        plain = httpx.get(f"{server.url}/v1/runs/{run_id}", headers=auth, timeout=30)
        assert plain.status_code == 200
    finally:
        for waiter in waiters:
            waiter.join()
    assert held == [200, 200]


def test_a_run_wait_is_woken_by_the_runs_end_not_by_polling(
    start: Callable[..., LiveServer],
) -> None:
    server = start(llm_delay=3.0)
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    engine = server.engine
    assert engine is not None
    reads: list[str] = []
    read_run = engine.get_run

    async def counted_get_run(project: str, run_id: str) -> Any:
        reads.append(run_id)
        return await read_run(project, run_id)

    engine.get_run = counted_get_run  # type: ignore[method-assign]
    run_id = add(server, key).json()["run_id"]
    waited = httpx.get(
        f"{server.url}/v1/runs/{run_id}",
        params={"wait": 30},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )
    assert waited.json()["status"] == "completed", waited.text
    # Read when the wait began and when the run's end was announced (a retried LLM call
    # may add a notification); polling read it every 0.25 s for the 3 s the LLM took.
    assert 2 <= reads.count(run_id) <= 4, reads


def test_an_mcp_event_stream_that_carries_nothing_is_ended(
    start: Callable[..., LiveServer],
) -> None:
    server = start(stream_idle_seconds=1.0)
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
    with httpx.stream(
        "GET", f"{server.url}/mcp", headers=headers, timeout=GUARD_SECONDS
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        # It ends when the server ends it. Keep-alive comments every 15 s would keep a
        # stream that is never ended alive for ever: the guard turns that into a failure.
        deadline = time.monotonic() + GUARD_SECONDS
        for _ in response.iter_bytes():
            assert time.monotonic() < deadline, "the idle stream was never ended"
