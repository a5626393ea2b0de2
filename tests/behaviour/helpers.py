"""Adds, waits and reads for the behaviour suite, over the public Engine API."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mnemo.domain.memory import Memory, Run
from mnemo.domain.requests import AddRequest, ListRequest, NotFound
from tests.behaviour.conftest import Mode

T = TypeVar("T")
TIMEOUT = 90.0  # a bound for a loaded machine, never an expectation

NOTES = [
    {"name": "Note", "description": "Anything the user notes.", "scoping": {"user_scoped": True}},
    {"name": "Urgent", "description": "Urgent notes.", "scoping": {"user_scoped": True}},
    {"name": "Digest", "description": "A digest of notes.", "scoping": {"user_scoped": True}},
]


def says(*lines: str, created_at: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": list(lines)}
    if created_at:
        body["created_at"] = created_at
    return {"string": body}


def items(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"pre_extracted": {"items": [{"topic": t, "content": c} for t, c in pairs]}}


def buffered_group(buffer: dict[str, Any]) -> dict[str, Any]:
    """Extract (string) or pre-extracted items -> `hold` (the buffer) -> a digest -> commit."""
    return {
        "topics": NOTES,
        "pipeline": {"steps": [
            {"id": "extract", "kind": "extract", "input_type": "string", "next": "hold"},
            {"id": "items", "kind": "extract", "input_type": "pre_extracted", "next": "hold"},
            {"id": "hold", "kind": "buffer", "next": "digest", **buffer},
            {"id": "digest", "kind": "transform", "instructions": "Digest the notes.",
             "output_topics": ["Digest"], "next": "commit"},
            {"id": "commit", "kind": "commit"},
        ]},
    }  # fmt: skip


def script_digest(mode: Mode) -> None:
    """A digest joins the notes of one flush, in their order: one digest per flush."""

    def digest(request: dict[str, Any]) -> dict[str, Any]:
        import json

        user = next(m for m in request["messages"] if m["role"] == "user")
        notes = [m["content"] for m in json.loads(user["content"])["memories"]]
        return {"memories": [{"topic": "Digest", "content": " | ".join(notes)}]}

    mode.llm.script("transform", digest)


async def add(mode: Mode, project: str, group: str, user: str, input: dict[str, Any]) -> Run:
    body = {"group": group, "user_id": user, "input": input}
    return await mode.engine.add(project, AddRequest.model_validate(body))


async def finished(mode: Mode, project: str, run_id: str) -> Run:
    """The run once terminal (fails the test, with the services' logs, if it never is)."""
    run = await mode.engine.wait_run(project, run_id, TIMEOUT)
    assert run.status.terminal, f"{mode.name}: run {run_id} is {run.status}\n{mode.logs()}"
    return run


async def completed(mode: Mode, project: str, *run_ids: str) -> list[Run]:
    done = [await finished(mode, project, r) for r in run_ids]
    assert [r.status.value for r in done] == ["completed"] * len(done), [r.error for r in done]
    return done


async def until(
    read: Callable[[], Awaitable[T]], ok: Callable[[T], bool], mode: Mode, what: str
) -> T:
    """Read until `ok` holds (polling); fails after TIMEOUT naming `what`."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        value = await read()
        if ok(value):
            return value
        assert asyncio.get_running_loop().time() < deadline, f"{what}: {value}\n{mode.logs()}"
        await asyncio.sleep(0.1)


async def status(mode: Mode, project: str, run_id: str) -> str:
    try:
        return (await mode.engine.get_run(project, run_id)).status.value
    except NotFound:
        return "missing"


async def reach(mode: Mode, project: str, run_id: str, wanted: str) -> None:
    await until(lambda: status(mode, project, run_id), lambda s: s == wanted, mode, wanted)


async def listing(mode: Mode, project: str, group: str, user: str, **body: Any) -> list[Memory]:
    request = ListRequest.model_validate({"group": group, "user_id": user, "limit": 100, **body})
    found, _ = await mode.engine.list_memories(project, request)
    return found


async def contents(mode: Mode, project: str, group: str, user: str, **body: Any) -> list[str]:
    return sorted(m.content for m in await listing(mode, project, group, user, **body))
