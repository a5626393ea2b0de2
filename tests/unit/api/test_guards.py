"""The gateway's guards, as pure functions: JSON bodies, Host names, safe echoes."""

from __future__ import annotations

import json

import pytest

from mnemo.api.host_guard import host_name
from mnemo.api.json_guard import body_problem
from mnemo.api.problem_documents import safe_text
from mnemo.api.problems import problem_response


def test_valid_and_non_json_bodies_pass() -> None:
    assert body_problem(b'{"user_id": "ann", "input": {"string": {"content": ["hi"]}}}') is None
    assert body_problem(b"{not json") is None  # FastAPI reports the syntax error itself


def test_invalid_utf8_is_refused() -> None:
    detail, errors = body_problem(b'{"a": "caf\xe9"}') or ("", [])
    assert "UTF-8" in detail and errors[0].location == "body"


def test_surrogates_and_nul_are_located() -> None:
    raw = b'{"input": {"pre_extracted": {"items": [{"content": "ok"}, {"content": "\\udc00"}]}},'
    raw += b' "user_id": "a\\u0000b"}'
    _, errors = body_problem(raw) or ("", [])
    assert [e.location for e in errors] == [
        "body.input.pre_extracted.items[1].content",
        "body.user_id",
    ]


@pytest.mark.parametrize("depth", [65, 2_000, 200_000])
def test_deep_bodies_are_refused(depth: int) -> None:
    detail, errors = body_problem(("[" * depth + "]" * depth).encode()) or ("", [])
    assert "nested deeper than 64" in detail and errors[0].location.startswith("body")


def test_problem_documents_never_fail_to_render() -> None:
    response = problem_response(400, "bad \ud800", [])
    assert json.loads(response.body.decode("utf-8"))["detail"] == "bad \\ud800"
    assert safe_text("x" * 300, 200) == "x" * 200 + "..."


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8080", "localhost"),
        ("LOCALHOST", "localhost"),
        ("[::1]:8080", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("evil.example:80", "evil.example"),
        ("", ""),
    ],
)
def test_host_names(header: str, name: str) -> None:
    assert host_name(header) == name


def test_text_is_left_to_mcp_but_depth_is_not() -> None:
    """/mcp answers bad tool arguments as tool errors itself; nesting is capped everywhere."""
    assert body_problem(b'{"params": {"arguments": {"memory_id": "a\\u0000b"}}}', False) is None
    assert body_problem(b"[" * 100 + b"]" * 100, check_text=False) is not None
