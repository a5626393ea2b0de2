"""Tool errors carry RFC 7807 problems whose locations name the tool's arguments."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from mnemo.client.errors import APIError, ConnectionError, NotFoundError
from mnemo.client.errors import ValidationError as Refused
from mnemo.mcp.problems import argument_location, invalid_arguments, problem_for


@pytest.mark.parametrize(
    ("rest", "tool"),
    [
        ("body.user_id", "arguments.user_id"),
        ("body.input.conversation.messages[0].role", "arguments.messages[0].role"),
        ("body.input.string.content[1]", "arguments.text[1]"),
        ("body.input.pre_extracted.items[0].topic", "arguments.items[0].topic"),
        ("body.input", "arguments"),
        ("body.retrieval_config.limit", "arguments.limit"),
        ("body.topics[2]", "arguments.topics[2]"),
        ("query.user_id", "arguments.user_id"),
        ("body", "arguments"),
        ("bodyguard", "bodyguard"),  # only whole segments are renamed
        ("arguments.query", "arguments.query"),
    ],
)
def test_rest_locations_become_argument_locations(rest: str, tool: str) -> None:
    assert argument_location(rest) == tool


def test_a_server_refusal_keeps_status_detail_and_values() -> None:
    refusal = Refused(
        400,
        {
            "detail": "the add was refused; nothing was stored",
            "errors": [{"location": "body.properties.tenant", "message": "needed", "value": "x"}],
        },
    )
    problem = problem_for(refusal)
    assert problem is not None
    assert (problem.status, problem.title, problem.detail) == (
        400,
        "Bad Request",
        "the add was refused; nothing was stored",
    )
    assert [(e.location, e.value) for e in problem.errors] == [("arguments.properties.tenant", "x")]


def test_not_found_unreachable_and_crashes() -> None:
    missing = problem_for(NotFoundError(404, {"detail": "memory 'm' not found"}))
    assert missing is not None and (missing.status, missing.errors) == (404, [])
    down = problem_for(ConnectionError("connection refused"))
    assert down is not None and down.status == 503 and "connection refused" in down.detail
    assert problem_for(RuntimeError("bug")) is None
    assert problem_for(None) is None
    assert problem_for(APIError(500, {"detail": "boom"})).status == 500  # type: ignore[union-attr]


class _Arguments(BaseModel):
    limit: int = Field(ge=1)


def test_schema_errors_are_located_under_arguments() -> None:
    with pytest.raises(ValidationError) as caught:
        _Arguments.model_validate({"limit": 0})
    problem = invalid_arguments(caught.value)
    assert problem.status == 422
    assert [(e.location, e.value) for e in problem.errors] == [("arguments.limit", 0)]
