"""Cursor paging of list: every memory once, in the list's order, and stable while memories
are created, rewritten and deleted between pages."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.paging import MemoryListing
from mnemo.domain.requests import InvalidRequest, ListRequest
from tests.integration.engine.helpers import add, add_and_wait, listing

pytestmark = pytest.mark.integration

# One bounded memory per slot, so an add rewrites that slot's memory in place.
GROUP = {
    "topics": [
        {"name": "Slot", "description": "One value per slot.",
         "scoping": {"user_scoped": True, "scope_properties": ["slot"]}, "is_bounded": True},
    ],
    "pipeline": {"steps": [
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip
SLOTS = 25


def _write(slot: int, content: str) -> dict[str, Any]:
    return {
        "group": "slots",
        "user_id": "ana",
        "properties": {"slot": str(slot)},
        "input": {"pre_extracted": {"items": [{"topic": "Slot", "content": content}]}},
    }


async def _page(engine: Engine, project: str, **body: Any) -> MemoryListing:
    request = ListRequest.model_validate({"group": "slots", "user_id": "ana", **body})
    return await engine.list_page(project, request)


@pytest.fixture
async def slots(engine: Engine, project: str) -> str:
    await engine.put_group(project, "slots", GROUP)
    runs = [await add(engine, project, _write(i, f"slot {i} v1")) for i in range(SLOTS)]
    for run in runs:
        assert (await engine.wait_run(project, run.run_id, 30)).status.value == "completed"
    return project


async def _all_pages(engine: Engine, project: str, first: MemoryListing, limit: int) -> list[str]:
    contents = [m.content for m in first.memories]
    cursor = first.next_cursor
    while cursor is not None:
        page = await _page(engine, project, limit=limit, cursor=cursor)
        assert page.total == first.total
        contents += [m.content for m in page.memories]
        cursor = page.next_cursor
    return contents


async def test_pages_cover_the_list_once_in_its_order(engine: Engine, slots: str) -> None:
    whole = [m.content for m in await listing(engine, slots, group="slots", user_id="ana", limit=100)]  # fmt: skip
    first = await _page(engine, slots, limit=10)
    assert first.total == SLOTS and len(first.memories) == 10 and first.next_cursor
    assert await _all_pages(engine, slots, first, 10) == whole
    last = await _page(engine, slots, limit=SLOTS)
    assert last.next_cursor is None  # everything fit: no cursor


async def test_paging_is_stable_while_memories_change(engine: Engine, slots: str) -> None:
    first = await _page(engine, slots, limit=8)
    seen = {m.properties["slot"] if m.properties else "" for m in first.memories}
    later = [s for s in range(SLOTS) if str(s) not in seen]
    # Between pages: rewrite four memories not yet returned (each moves to the top of the
    # list now), delete three more, and create five new ones.
    writes = [add_and_wait(engine, slots, _write(s, f"slot {s} v2")) for s in later[:4]]
    writes += [add_and_wait(engine, slots, _write(100 + i, "new")) for i in range(5)]
    await asyncio.gather(*writes)
    now = await listing(engine, slots, group="slots", user_id="ana", limit=100)
    for memory in [m for m in now if m.content in {f"slot {s} v1" for s in later[4:7]}]:
        await engine.delete_memory(slots, "slots", "ana", memory.id)
    contents = await _all_pages(engine, slots, first, 8)
    assert sorted(contents) == sorted(f"slot {i} v1" for i in range(SLOTS))
    # ... while a new listing sees the present.
    fresh = await _all_pages(engine, slots, await _page(engine, slots, limit=8), 8)
    assert len(fresh) == SLOTS + 5 - 3 and fresh.count("new") == 5


async def test_a_cursor_continues_an_as_of_listing(engine: Engine, slots: str) -> None:
    at = datetime.now(UTC)
    await add_and_wait(engine, slots, _write(0, "slot 0 v2"))
    first = await _page(engine, slots, limit=10, as_of=at.isoformat())
    contents = await _all_pages(engine, slots, first, 10)
    assert "slot 0 v1" in contents and "slot 0 v2" not in contents
    assert first.next_cursor is not None
    same = await _page(engine, slots, limit=10, as_of=at.isoformat(), cursor=first.next_cursor)
    assert same.memories  # the first page's as_of may be sent again with its cursor


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cursor": "not-a-cursor"}, "not a cursor of this server"),
        ({"user_id": "bob"}, "other filters"),
        ({"offset": 3}, "without offset"),
        ({"as_of": "2020-01-01T00:00:00Z"}, "as of its first page's time"),
    ],
)
async def test_a_cursor_that_does_not_fit_is_refused(
    engine: Engine, slots: str, change: dict[str, Any], message: str
) -> None:
    first = await _page(engine, slots, limit=5)
    with pytest.raises(InvalidRequest) as refused:
        await _page(engine, slots, limit=5, **{"cursor": first.next_cursor, **change})
    assert refused.value.kind == "invalid" and message in str(refused.value)
    assert refused.value.errors[0].location == "body.cursor"
