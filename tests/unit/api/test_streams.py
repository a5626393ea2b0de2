"""Which requests the long-lived pool counts, and what counts as an idle event stream."""

from __future__ import annotations

from typing import Any

from mnemo.api.streams import _only_comments, is_stream


def scope(method: str, path: str, query: bytes = b"") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "query_string": query}


def test_mcp_streams_and_run_waits_are_long_lived() -> None:
    assert is_stream(scope("GET", "/mcp"))
    assert is_stream(scope("GET", "/v1/runs/r1", b"wait=30"))
    assert is_stream(scope("GET", "/v1/runs/r1", b"x=1&wait=0.5"))


def test_ordinary_requests_are_not() -> None:
    assert not is_stream(scope("POST", "/mcp"))
    assert not is_stream(scope("GET", "/v1/runs/r1"))
    assert not is_stream(scope("GET", "/v1/runs/r1", b"wait=0"))
    assert not is_stream(scope("GET", "/v1/runs/r1", b"wait=soon"))  # the route's 422
    assert not is_stream(scope("GET", "/v1/memories/m1", b"wait=30"))
    assert not is_stream({"type": "websocket", "method": "GET", "path": "/mcp"})


def test_keep_alive_comments_are_not_events() -> None:
    assert _only_comments(b": ping - 2026-12-07 02:00:00\r\n\r\n")
    assert not _only_comments(b'event: message\r\ndata: {"x": 1}\r\n\r\n')
    assert not _only_comments(b"")
