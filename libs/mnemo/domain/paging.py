"""Cursor paging of `POST /v1/memories/list` (mnemo extension): stable under writes.

A cursor pins the listing to one system time, the `at` of its first page (its `as_of` if
it had one), and remembers where the last page ended in the list's order (newest first:
`updated_at` descending, then `id`). Every later page reads the memories as they stood at
`at` (the as-of reader), after that position. Memories written while a client pages are
therefore neither returned twice nor skipped: each memory of the listing's moment comes
once, in its state of then; what was written since is left to a new listing.

Cursors are opaque to clients (URL-safe base64 of a small JSON document) and carry a digest
of the listing's filters, so a cursor sent with other filters is refused, not misread.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ValidationError

from mnemo.domain.instant import AwareInstant
from mnemo.domain.memory import Memory
from mnemo.domain.search import MemoryQuery
from mnemo.errors import MnemoError

CURSOR_CHARS = 1024
CURSOR = (
    "mnemo extension: the `next_cursor` of the previous page, to read the next one. Send "
    "the same filters (topics, user_id, properties, group) as for the first page. A "
    "listing read through cursors is stable: each memory that existed when its first page "
    "was read comes exactly once, as it stood then, however the memories change meanwhile."
)
NEXT_CURSOR = (
    "mnemo extension: send it back as `cursor` for the next page; absent on the last page."
)


class InvalidCursor(MnemoError, ValueError):
    """A cursor that is not one this server made, or one made for other filters."""


class ListCursor(BaseModel):
    at: AwareInstant
    updated_at: AwareInstant
    id: str
    selection: str

    def encode(self) -> str:
        raw = json.dumps(self.model_dump(mode="json"), separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> ListCursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            return cls.model_validate_json(raw)
        except (binascii.Error, ValueError, ValidationError) as exc:
            raise InvalidCursor("not a cursor of this server (send `next_cursor` as is)") from exc

    @property
    def position(self) -> tuple[datetime, str]:
        return (self.updated_at, self.id)


def selection_digest(query: MemoryQuery) -> str:
    """What the listing selects: every field of the query but the page size, the time it
    reads at and what only search uses (so a new filter is part of it by default)."""
    what = query.model_dump(mode="json", exclude={"limit", "as_of", "text", "retrieval_type"})
    canonical = json.dumps(what, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class MemoryListing:
    """One page of a list: the memories, how many match in all, the cursor of the next page."""

    memories: list[Memory]
    total: int
    next_cursor: str | None = None
