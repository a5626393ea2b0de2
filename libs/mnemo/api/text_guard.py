"""Refuse NUL characters, which Postgres cannot store in text or JSONB, with a located 400.

Without this guard a `\\u0000` anywhere in a request reaches the database and fails there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import Request
from pydantic import BaseModel

from mnemo.api.problem_documents import location_of
from mnemo.domain.requests import FieldError, InvalidRequest

NUL = "\x00"
_MESSAGE = "text must not contain NUL (\\u0000) characters"


def nul_locations(value: Any, path: tuple[str | int, ...]) -> Iterator[str]:
    """Locations of every string (or mapping key) under `value` that holds a NUL."""
    if isinstance(value, str):
        if NUL in value:
            yield location_of(path)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and NUL in key:
                yield location_of(path)
            yield from nul_locations(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from nul_locations(item, (*path, index))


def _refuse(locations: list[str]) -> None:
    if locations:
        raise InvalidRequest(
            _MESSAGE, [FieldError(location=where, message=_MESSAGE) for where in locations]
        )


def reject_nul_in_body(body: BaseModel) -> None:
    _refuse(list(nul_locations(body.model_dump(mode="json"), ("body",))))


async def reject_nul_in_parameters(request: Request) -> None:
    """Router dependency: path and query parameters must be NUL-free."""
    locations = list(nul_locations(dict(request.path_params), ("path",)))
    locations += nul_locations(dict(request.query_params), ("query",))
    _refuse(locations)
