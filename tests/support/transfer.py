"""A project with every kind of memory state, and its export, for the export/import tests
of both run modes: two users, a shared topic scoped by a property, a bounded topic rewritten
twice (versions), a deleted memory (archived, with its last content kept), dated inputs
(event times in 2024-2025, system times of today)."""

from __future__ import annotations

import json
from typing import Any

from mnemo.core.engine import Engine
from mnemo.core.export import export_lines
from mnemo.domain.requests import AddRequest, SearchRequest

GROUP = {
    "description": "Everything a move must carry.",
    "topics": [
        {"name": "Preference", "description": "The user's display preference.",
         "scoping": {"user_scoped": True, "scope_properties": ["team"]}, "is_bounded": True},
        {"name": "Note", "description": "Anything about the user.",
         "scoping": {"user_scoped": True, "scope_properties": ["team"]}},
        {"name": "TeamFact", "description": "Facts about a team.",
         "scoping": {"user_scoped": False, "scope_properties": ["team"]}},
    ],
    "pipeline": {"steps": [
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
    "retention": {"raw_input_days": 30},
}  # fmt: skip


async def _facts(
    engine: Engine, project: str, user: str | None, when: str, *items: tuple[str, str]
) -> None:
    body: dict[str, Any] = {
        "group": "moves",
        "user_id": user,
        "properties": {"team": "core", "source": "test"},
        "input": {
            "pre_extracted": {
                "items": [{"topic": t, "content": c} for t, c in items],
                "created_at": when,
            }
        },
    }
    run = await engine.add(project, AddRequest.model_validate(body))
    done = await engine.wait_run(project, run.run_id, 60)
    assert done.status.value == "completed", done.error


async def build_project(engine: Engine, project: str) -> None:
    await engine.put_group(project, "moves", GROUP)
    for user in ("ana", "bob"):
        await _facts(engine, project, user, "2024-06-01T09:00:00Z",
                     ("Note", f"{user} keeps bees."), ("Note", f"{user} sails on weekends."))  # fmt: skip
        for month, theme in (("01", "dark"), ("02", "light"), ("03", "solarized")):
            await _facts(engine, project, user, f"2025-{month}-01T12:00:00+02:00",
                         ("Preference", f"{user} prefers {theme} mode."))  # fmt: skip
    await _facts(engine, project, "ana", "2025-04-01T08:00:00Z",
                 ("TeamFact", "The core team ships on Fridays."))  # fmt: skip
    notes, _ = await engine.list_memories(
        project,
        _list(
            {"group": "moves", "user_id": "ana", "topics": ["Note"], "properties": {"team": "core"}}
        ),
    )
    sailing = next(m for m in notes if "sails" in m.content)
    await engine.delete_memory(project, "moves", "ana", sailing.id)


async def finds_a_built_memory(engine: Engine, project: str) -> bool:
    """Whether a vector search finds one of `build_project`'s memories by its own text."""
    request = SearchRequest.model_validate({
        "query": "ana prefers solarized mode.", "user_id": "ana", "group": "moves",
        "retrieval_config": {"retrieval_type": "vector", "limit": 1},
    })  # fmt: skip
    found = await engine.search(project, request)
    return bool(found) and found[0].content == "ana prefers solarized mode."


def _list(body: dict[str, Any]) -> Any:
    from mnemo.domain.requests import ListRequest

    return ListRequest.model_validate(body)


async def export_of(engine: Engine, project: str, vectors: bool = True) -> list[dict[str, Any]]:
    """The project's export, as records."""
    return [json.loads(line) async for line in export_lines(engine, project, None, vectors)]


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a round trip must keep equal: every group and memory line (the header names the
    project and the moment of the export)."""
    return [r for r in records if r["kind"] in ("group", "memory")]


def memories_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["kind"] == "memory"]
