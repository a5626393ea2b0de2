"""Tool errors: the RFC 7807 document REST would answer, with locations naming tool arguments.

A refused call comes back as a tool result with `isError` and the problem as JSON text, so
the agent reads what to fix: `{"status": 400, "detail": ..., "errors": [{"location":
"arguments.user_id", "message": ...}]}`. Locations the engine or the server report against
the REST body (`body.input.conversation.messages[0].role`) are renamed to the tool's
arguments (`arguments.messages[0].role`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from mnemo.api.problem_documents import (
    Problem,
    ProblemError,
    problem_document,
    validation_errors,
)
from mnemo.client.errors import APIError, MnemoConnectionError, error_for

ARGUMENTS = "arguments"
# REST body paths whose tool argument has another name; longest first.
_RENAMED = (
    ("body.input.string.content", "arguments.text"),
    ("body.input.conversation.messages", "arguments.messages"),
    ("body.input.pre_extracted.items", "arguments.items"),
    ("body.retrieval_config.retrieval_type", "arguments.retrieval"),
    ("body.retrieval_config.limit", "arguments.limit"),
    ("body.input", ARGUMENTS),
    ("body.root", ARGUMENTS),
    ("body", ARGUMENTS),
    ("query", ARGUMENTS),
    ("path", ARGUMENTS),
)


def argument_location(location: str) -> str:
    """`body.input.pre_extracted.items[0].topic` -> `arguments.items[0].topic`."""
    for old, new in _RENAMED:
        if location == old or location.startswith((old + ".", old + "[")):
            return new + location[len(old) :]
    return location


def problem_for(exc: BaseException | None) -> Problem | None:
    """The problem a client error describes; None for anything else (a crash)."""
    if isinstance(exc, APIError):
        errors = [
            ProblemError(
                location=argument_location(str(e.get("location", ""))),
                message=str(e.get("message", "")),
                value=e.get("value"),
            )
            for e in exc.errors
        ]
        return problem_document(exc.status, exc.detail, errors)
    if isinstance(exc, MnemoConnectionError):
        return problem_document(503, f"cannot reach the mnemo server: {exc}")
    return None


def invalid_arguments(exc: ValidationError) -> Problem:
    """Arguments the tool's input schema refused (checked before the tool runs)."""
    raw: Sequence[Any] = [{**e, "loc": (ARGUMENTS, *e["loc"])} for e in exc.errors()]
    _, _, errors = validation_errors(raw)
    return problem_document(422, "the arguments do not match the tool's input schema", errors)


def refused(location: str, message: str, status: int = 422) -> APIError:
    """A refusal the tool layer itself makes, raised like the server's own."""
    problem = {"detail": message, "errors": [{"location": location, "message": message}]}
    return error_for(status, problem)


def error_result(problem: Problem) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text=problem.model_dump_json(exclude_none=True))], is_error=True
    )
