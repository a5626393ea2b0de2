"""Flush ids: one derivation for both transports, from the buffer and its runs."""

from __future__ import annotations

from mnemo.core.flush_ids import buffer_key, flush_id


def test_the_same_runs_from_the_same_buffer_have_the_same_id() -> None:
    first = flush_id("notes", "hold", "p|u", ["r1", "r2"])
    assert first == flush_id("notes", "hold", "p|u", ["r1", "r2", "r1"])  # a run counts once
    assert first.startswith("flush-")


def test_another_buffer_or_other_runs_give_another_id() -> None:
    ids = {
        flush_id("notes", "hold", "p|u", ["r1", "r2"]),
        flush_id("notes", "hold", "p|u", ["r2", "r1"]),
        flush_id("notes", "hold", "p|v", ["r1", "r2"]),
        flush_id("notes", "hold_v2", "p|u", ["r1", "r2"]),
        flush_id("notes", "hold", "p|u", ["r1"]),
    }
    assert len(ids) == 5
    assert buffer_key("notes", "hold", "p|u") == "notes|hold|p|u"
