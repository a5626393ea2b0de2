from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.console.forms import (
    FormError,
    Page,
    decode_cursor,
    encode_cursor,
    format_properties,
    parse_properties,
)


def test_properties_parse_from_key_value_pairs() -> None:
    assert parse_properties("repo=mnemo, team = core ,") == {"repo": "mnemo", "team": "core"}
    assert parse_properties("path=a=b") == {"path": "a=b"}
    assert parse_properties(None) == {} and parse_properties(" ") == {}
    assert format_properties({"b": "2", "a": "1"}) == "a=1, b=2"
    for bad in ("team", "=core", "repo=mnemo, oops"):
        with pytest.raises(FormError) as refused:
            parse_properties(bad)
        assert refused.value.field == "properties" and "is not key=value" in refused.value.message


def test_pages_count_from_one() -> None:
    page = Page(number=2, size=25, total=60)
    assert (page.offset, page.last, page.first_item, page.last_item) == (25, 3, 26, 50)
    assert Page(1, 25, 0).last == 1 and Page(1, 25, 0).first_item == 0
    assert Page(3, 25, 60).last_item == 60


def test_run_cursors_round_trip_and_garbage_is_refused() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert decode_cursor(encode_cursor(at, "run-1")) == (at, "run-1")
    assert decode_cursor(None) is None and decode_cursor("") is None
    for bad in ("garbage", "2026-01-02T03:04:05~", "2026-01-02T03:04:05~run-1", "x~run-1"):
        with pytest.raises(FormError):
            decode_cursor(bad)
