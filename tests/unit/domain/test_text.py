"""Text the store cannot hold, located in decoded JSON; depth checked without recursion."""

from __future__ import annotations

import pytest

from mnemo.domain.text import (
    NUL_MESSAGE,
    SURROGATE_MESSAGE,
    TooDeep,
    bad_text,
    refuse_unstorable_text,
    text_problem,
)


def test_text_problems() -> None:
    assert text_problem("plain") is None and text_problem("caf\u00e9 \U0001f600") is None
    assert text_problem("a\x00b") == NUL_MESSAGE
    assert text_problem("a\ud800b") == SURROGATE_MESSAGE
    assert text_problem("\udfff") == SURROGATE_MESSAGE


def test_locations_in_document_order() -> None:
    document = {
        "input": {"string": {"content": ["ok", "bad\ud800", "nul\x00"]}},
        "properties": {"k\ud83d": "v"},
        "user_id": "fine",
    }
    assert [where for where, _ in bad_text(document)] == [
        ("input", "string", "content", 1),
        ("input", "string", "content", 2),
        ("properties",),  # a bad key is reported at its mapping
    ]


def test_depth_is_capped_without_recursion() -> None:
    deep: object = 1
    for _ in range(100_000):  # far past the interpreter's recursion limit
        deep = [deep]
    with pytest.raises(TooDeep) as too_deep:
        list(bad_text({"a": deep}, max_depth=64))
    assert len(too_deep.value.location) == 64 and too_deep.value.location[0] == "a"
    assert list(bad_text({"a": deep})) == []  # no cap: walked to the bottom, iteratively


def test_depth_at_the_cap_passes() -> None:
    nested: object = "x"
    for _ in range(63):
        nested = {"a": nested}
    assert list(bad_text({"a": nested}, max_depth=64)) == []


def test_refuse_names_where() -> None:
    with pytest.raises(ValueError, match=r"surrogates.*\(at items\.0\.content\)"):
        refuse_unstorable_text({"items": [{"content": "\ud800"}]})
    assert refuse_unstorable_text({"ok": ["fine"]}) == {"ok": ["fine"]}
