"""Export and import between two embedded mnemos (two databases): lossless round trips,
vectors kept or recomputed, bounded ids under another project, erased users, id clashes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.core.engine import Engine
from mnemo.core.export import export_lines
from mnemo.core.imports import import_batch
from mnemo.domain.requests import InvalidRequest, SearchRequest
from mnemo.domain.scope import bounded_memory_id
from mnemo.domain.transfer import ImportBatch, decode_vector, encode_vector
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from tests.integration.conftest import engine_settings, scripted_client
from tests.integration.engine.helpers import add_and_wait, listing
from tests.support.dynamics import DESK, EPISODES, LUTHIER_GROUP, consolidate_answer, facts
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project, comparable, export_of, memories_of

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def target(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path_factory: Any
) -> AsyncIterator[Engine]:
    """A second mnemo, on its own database."""
    settings = engine_settings(postgres.new_database(), Path(tmp_path_factory.mktemp("target")))
    engine = await start_engine(settings, llm=scripted_client(llm_server), embedder=HashEmbedder())
    yield engine
    await engine.close()


async def _import(engine: Engine, project: str, records: list[dict[str, Any]]) -> Any:
    header = records[0]
    groups = [r for r in records if r["kind"] == "group"]
    await import_batch(engine, project, ImportBatch.model_validate({"groups": groups}))
    body = {"embedding": header["embedding"], "memories": memories_of(records)}
    return await import_batch(engine, project, ImportBatch.model_validate(body))


@pytest.fixture
async def exported(engine: Engine, project: str) -> list[dict[str, Any]]:
    await build_project(engine, project)
    return await export_of(engine, project)


async def test_the_export_holds_every_state_and_field(exported: list[dict[str, Any]]) -> None:
    header, *_, end = exported
    memories = memories_of(exported)
    assert header["kind"] == "header" and header["embedding"] == {"label": "hash:384", "dim": 384}
    assert header["memories"] == len(memories) == end["memories"] == 7 and header["users"] == 2
    assert [r["name"] for r in exported if r["kind"] == "group"] == ["default", "moves"]
    by_content = {m["content"]: m for m in memories}
    ana = by_content["ana prefers solarized mode."]
    assert ana["version"] == 3 and [v["content"] for v in ana["versions"]] == [
        "ana prefers dark mode.",
        "ana prefers light mode.",
    ]
    assert ana["properties"] == {"team": "core"} and ana["user_id"] == "ana"
    assert ana["event_time"].startswith("2025-01-01T10:00:00") and ana["event_time_end"].startswith(
        "2025-03-01T10:00:00"
    )
    assert ana["versions"][0]["event_time"].startswith("2025-01-01T10:00:00")
    assert all(v["embedding"] for v in ana["versions"]) and ana["embedding"]
    sailing = by_content["ana sails on weekends."]
    assert sailing["status"] == "archived" and sailing["operation"] == "deleted"
    assert sailing["versions"][0]["status"] == "active"
    team = by_content["The core team ships on Fridays."]
    assert team["topic"] == "TeamFact" and team["written_by_run_id"] in team["run_ids"]
    assert [m["id"] for m in memories] == sorted(m["id"] for m in memories)  # id order


async def test_a_round_trip_is_equal_on_every_field(
    engine: Engine, target: Engine, project: str, exported: list[dict[str, Any]]
) -> None:
    report = await _import(target, project, exported)
    assert report.imported == 7 and report.embeddings == "kept" and not report.rekeyed
    assert comparable(await export_of(target, project)) == comparable(exported)
    # Importing it again changes nothing (a resumed import repeats a batch).
    await _import(target, project, exported)
    assert comparable(await export_of(target, project)) == comparable(exported)
    # And the restored memories answer as they did: now, and as of a past instant.
    query = {"query": "which mode", "group": "moves", "user_id": "ana",
             "properties": {"team": "core"}, "topics": ["Preference"]}  # fmt: skip
    for extra in ({}, {"as_of": _first_version_time(exported)}):
        request = SearchRequest.model_validate({**query, **extra})
        theirs = await engine.search(project, request)
        ours = await target.search(project, request)
        assert [(m.id, m.content, m.score) for m in ours] == [
            (m.id, m.content, m.score) for m in theirs
        ]


def _first_version_time(exported: list[dict[str, Any]]) -> str:
    ana = next(m for m in memories_of(exported) if m["content"] == "ana prefers solarized mode.")
    return str(ana["versions"][0]["valid_to"])  # the instant the second version began


async def test_vectors_of_another_model_are_recomputed(
    target: Engine, project: str, exported: list[dict[str, Any]]
) -> None:
    odd = encode_vector([1.0] + [0.0] * 383)
    tampered = [{**m, "embedding": odd} for m in memories_of(exported)]
    other = [{"kind": "header", "embedding": {"label": "other-model", "dim": 384}}, *tampered]
    await import_batch(target, project, ImportBatch.model_validate({"groups": [
        r for r in exported if r["kind"] == "group"]}))  # fmt: skip
    report = await _import(target, project, other)
    assert report.embeddings == "recomputed"
    again = memories_of(await export_of(target, project))
    expected = await HashEmbedder().embed([m["content"] for m in again])
    for memory, vector in zip(again, expected, strict=True):
        assert decode_vector(memory["embedding"]) == pytest.approx(vector, abs=1e-6)
    # The same odd vectors under this server's own model travel as they are.
    same = [{"kind": "header", "embedding": {"label": "hash:384", "dim": 384}}, *tampered]
    assert (await _import(target, project, same)).embeddings == "kept"
    assert {m["embedding"] for m in memories_of(await export_of(target, project))} == {odd}


async def test_another_project_keeps_the_bounded_ids(
    target: Engine, project: str, exported: list[dict[str, Any]]
) -> None:
    """Bounded memories keep their ids in another project (as an Engram pull keeps
    Engram's); later writes find them by scope (tests/cli/test_transfer_cli.py)."""
    elsewhere = f"{project}-moved"
    report = await _import(target, elsewhere, exported)
    assert report.rekeyed == []
    moved = {m["content"]: m for m in memories_of(await export_of(target, elsewhere))}
    scope = {"user_id": "ana", "p:team": "core"}
    assert moved["ana prefers solarized mode."]["id"] != bounded_memory_id(
        elsewhere, "moves", "Preference", scope
    )
    original = {m["content"]: m for m in memories_of(exported)}
    for content in ("ana keeps bees.", "ana prefers solarized mode."):
        assert moved[content]["id"] == original[content]["id"]
    # The same ids may not be imported into a third project on this server: they are taken.
    with pytest.raises(InvalidRequest) as clash:
        await _import(target, f"{project}-third", exported)
    assert clash.value.kind == "conflict" and "another project" in clash.value.detail


async def test_an_erased_users_memories_stay_erased(
    target: Engine, project: str, exported: list[dict[str, Any]]
) -> None:
    await _import(target, project, exported)
    await target.erase_user(project, "bob")
    report = await _import(target, project, exported)
    assert len(report.skipped_erased) == 3 and report.imported == 4
    users = {m["user_id"] for m in memories_of(await export_of(target, project))}
    assert users == {"ana"}


async def test_memories_of_an_unknown_group_are_refused_whole(
    target: Engine, project: str, exported: list[dict[str, Any]]
) -> None:
    body = {"memories": memories_of(exported)}  # its groups were never imported
    with pytest.raises(InvalidRequest) as refused:
        await import_batch(target, f"{project}-nogroups", ImportBatch.model_validate(body))
    assert refused.value.kind == "unprocessable"
    assert refused.value.errors[0].location == "body.memories[0].group"


async def test_an_export_resumes_after_an_id(
    engine: Engine, exported: list[dict[str, Any]], project: str
) -> None:
    memories = memories_of(exported)
    rest = [json.loads(x) async for x in export_lines(engine, project, memories[2]["id"], True)]
    assert rest[0]["remaining"] == len(memories) - 3 and rest[0]["after"] == memories[2]["id"]
    assert memories_of(rest) == memories[3:] and rest[-1] == {
        "kind": "end",
        "memories": 4,
        "skipped": [],
    }


async def test_a_consolidated_rule_moves_with_its_sources(
    engine: Engine, target: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    """A real consolidation pass (scripted LLM): the rule carries its episodes, the episodes
    their `consolidated` status, and the target answers provenance and sources alike."""
    await engine.put_group(project, "luthier", LUTHIER_GROUP)
    llm.script("consolidate", consolidate_answer)
    scope = {"group": "luthier", "user_id": "luthier-1", "properties": {"desk_id": DESK}}
    for text in EPISODES:
        run = await add_and_wait(engine, project, {**scope, "input": facts("Episodes", text)})
        assert run.status.value == "completed", run.error
    deadline = asyncio.get_running_loop().time() + 20
    while not (rules := await listing(engine, project, topics=["Rules"], **scope)):
        assert asyncio.get_running_loop().time() < deadline, "no rule was consolidated"
        await asyncio.sleep(0.1)
    exported = await export_of(engine, project)
    [rule] = [m for m in memories_of(exported) if m["topic"] == "Rules"]
    assert rule["id"] == rules[0].id and len(rule["sources"]) == 3
    episodes = [m for m in memories_of(exported) if m["topic"] == "Episodes"]
    assert {m["status"] for m in episodes} == {"consolidated"}
    assert {s["memory_id"] for s in rule["sources"]} == {m["id"] for m in episodes}

    await _import(target, project, exported)
    assert comparable(await export_of(target, project)) == comparable(exported)
    args = (project, "luthier", "luthier-1", rule["id"])
    assert await target.memory_provenance(*args) == await engine.memory_provenance(*args)
    theirs, ours = await engine.memory_sources(*args), await target.memory_sources(*args)
    assert [(m.id, m.status, m.consolidated_into) for m in ours] == [
        (m.id, m.status, m.consolidated_into) for m in theirs
    ]
