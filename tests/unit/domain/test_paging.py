"""List cursors: opaque, round-tripping, refusing what they did not make, tied to filters."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.domain.paging import InvalidCursor, ListCursor, selection_digest
from mnemo.domain.search import MemoryQuery, TopicSelector

AT = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def test_a_cursor_round_trips_to_the_microsecond() -> None:
    cursor = ListCursor(at=AT, updated_at=AT, id="m-1", selection="s")
    text = cursor.encode()
    assert text.isascii() and "=" not in text and "/" not in text and "+" not in text
    assert ListCursor.decode(text) == cursor
    assert ListCursor.decode(text).position == (AT, "m-1")


@pytest.mark.parametrize("text", ["", "!!!", "e30", "bm90IGpzb24"])  # e30 is "{}"
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(InvalidCursor):
        ListCursor.decode(text)


def test_the_selection_digest_follows_filters_not_page_size() -> None:
    query = MemoryQuery(
        project="p", group="g", topics=(TopicSelector(name="T"),), user_id="ana", limit=5
    )
    assert selection_digest(query) == selection_digest(query.model_copy(update={"limit": 50}))
    assert selection_digest(query) == selection_digest(query.model_copy(update={"as_of": AT}))
    for change in ({"user_id": "bob"}, {"project": "q"}, {"properties": {"k": "v"}}):
        assert selection_digest(query) != selection_digest(query.model_copy(update=change))
