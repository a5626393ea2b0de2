"""Parsing the console's query strings: property filters, pages and run cursors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mnemo.domain.instant import in_range


class FormError(ValueError):
    """A field the user filled in wrongly; shown next to that field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def parse_properties(text: str | None) -> dict[str, str]:
    """`"repo=mnemo, team=core"` -> {"repo": "mnemo", "team": "core"}."""
    properties: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise FormError("properties", f"'{item.strip()}' is not key=value")
        properties[key] = value
    return properties


def format_properties(properties: dict[str, str] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((properties or {}).items()))


def blank_to_none(value: str | None) -> str | None:
    return value.strip() or None if value else None


@dataclass(frozen=True)
class Page:
    """1-based page of `size` items among `total`."""

    number: int
    size: int
    total: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size

    @property
    def last(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def first_item(self) -> int:
        return min(self.total, self.offset + 1)

    @property
    def last_item(self) -> int:
        return min(self.total, self.offset + self.size)


def encode_cursor(created_at: datetime, run_id: str) -> str:
    return f"{created_at.isoformat()}~{run_id}"


def decode_cursor(text: str | None) -> tuple[datetime, str] | None:
    """The (created_at, run_id) of the last run seen; FormError when it is garbled."""
    if not text:
        return None
    at, sep, run_id = text.rpartition("~")
    try:
        moment = datetime.fromisoformat(at)
    except ValueError:
        moment = None
    if not sep or not run_id or moment is None or moment.tzinfo is None or not in_range(moment):
        raise FormError("before", "the page cursor is not valid; start from the newest runs")
    return moment, run_id
