"""The base of every model read from callers: unknown fields and NUL characters refused."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


def refuse_nul(value: Any) -> Any:
    """Postgres text cannot hold NUL characters: refuse them with a clear message."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("text must not contain NUL (\\x00) characters")
    elif isinstance(value, dict):
        for item in value.values():
            refuse_nul(item)
    elif isinstance(value, list | tuple):
        for item in value:
            refuse_nul(item)
    return value


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        return refuse_nul(data)
