"""JSON encoding of records: bytes on the wire, pydantic models in code."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def encode(record: BaseModel) -> bytes:
    return record.model_dump_json(exclude_none=True).encode()


def decode(model: type[M], value: bytes | str | None) -> M:
    """Parse a record; raises pydantic.ValidationError for an invalid payload (a poison record)."""
    if value is None:
        raise ValueError("empty record (tombstone)")
    return model.model_validate_json(value)
