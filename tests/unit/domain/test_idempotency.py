"""The fingerprint that decides whether a repeat under an Idempotency-Key is the same add."""

from __future__ import annotations

from typing import Any

from mnemo.domain.idempotency import request_fingerprint
from mnemo.domain.requests import AddRequest


def _fingerprint(body: dict[str, Any]) -> str:
    return request_fingerprint(AddRequest.model_validate(body))


BASE = {"user_id": "ana", "input": {"string": {"content": ["I keep bees"]}}}


def test_spellings_of_one_request_share_a_fingerprint() -> None:
    assert _fingerprint(BASE) == _fingerprint({**BASE, "group": "default", "properties": None})
    assert _fingerprint({**BASE, "properties": {"a": "1", "b": "2"}}) == _fingerprint(
        {**BASE, "properties": {"b": "2", "a": "1"}}
    )
    dated = {"content": ["x"], "created_at": "2026-01-02T10:00:00+02:00"}
    utc = {"content": ["x"], "created_at": "2026-01-02T08:00:00Z"}
    assert _fingerprint({"input": {"string": dated}}) == _fingerprint({"input": {"string": utc}})


def test_any_difference_in_meaning_changes_it() -> None:
    others = [
        {**BASE, "user_id": "bob"},
        {**BASE, "group": "notes"},
        {**BASE, "properties": {"a": "1"}},
        {**BASE, "input": {"string": {"content": ["I keep wasps"]}}},
        {**BASE, "input": {"string": {"content": ["I keep bees", "I keep bees"]}}},
        {**BASE, "root": "extract_string"},
    ]
    prints = {_fingerprint(b) for b in others}
    assert len(prints) == len(others) and _fingerprint(BASE) not in prints
