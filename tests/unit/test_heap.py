"""settle_heap: start-up's objects leave the collector's generations, and young
collections run less often."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from mnemo.heap import GC_THRESHOLD, settle_heap


@pytest.fixture
def restored_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_start_up_objects_are_frozen_and_collections_are_rarer(restored_gc: None) -> None:
    built_at_start = [object() for _ in range(1000)]
    older = gc.get_threshold()[1:]

    settle_heap()

    assert gc.get_freeze_count() >= len(built_at_start)
    assert gc.get_threshold() == (GC_THRESHOLD, *older)


def test_cycles_made_after_start_up_are_still_freed(restored_gc: None) -> None:
    settle_heap()

    class Node:
        other: object = None

    a, b = Node(), Node()
    a.other, b.other = b, a
    count = sum(isinstance(o, Node) for o in gc.get_objects())
    del a, b
    gc.collect()

    assert sum(isinstance(o, Node) for o in gc.get_objects()) == count - 2
