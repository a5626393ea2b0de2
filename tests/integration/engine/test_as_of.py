"""As-of search and list, and provenance, on real Postgres (embedded mode).

A preference changes three times. At each of the four instants the test records what
every retrieval mode and list answer; afterwards, the same questions `as_of` each instant
must give exactly those answers (ids, contents, scores, times), not today's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise

import pytest
from pydantic import ValidationError
from sqlalchemy import text

from mnemo.core.engine import Engine
from mnemo.domain.requests import InvalidRequest, NotFound, SearchRequest
from mnemo.domain.scope import bounded_memory_id
from tests.integration.engine.helpers import add_and_wait, search
from tests.support.snapshots import MODES, Snapshot, contents, snapshot

pytestmark = pytest.mark.integration

GROUP = {
    "topics": [
        {"name": "Preference", "description": "The user's current display preference.",
         "scoping": {"user_scoped": True}, "is_bounded": True},
        {"name": "Note", "description": "Anything else about the user.",
         "scoping": {"user_scoped": True}},
    ],
    "pipeline": {"steps": [
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip
PREFERENCES = (
    "User prefers dark mode colors.",
    "User prefers light mode colors.",
    "User prefers solarized colors.",
    "User prefers high contrast colors.",
)
BEES = "User keeps bees and colors honey jars."
QUERY = "which colors does the user prefer"


@dataclass
class History:
    project: str
    before: datetime
    instants: list[datetime]
    live: list[Snapshot]
    run_ids: list[str]
    note_id: str

    @property
    def preference_id(self) -> str:
        return bounded_memory_id(self.project, "prefs", "Preference", {"user_id": "ana"})


def _facts(*items: tuple[str, str]) -> dict[str, object]:
    return {"pre_extracted": {"items": [{"topic": t, "content": c} for t, c in items]}}


async def _change(engine: Engine, project: str, *items: tuple[str, str]) -> str:
    body = {"group": "prefs", "user_id": "ana", "input": _facts(*items)}
    run = await add_and_wait(engine, project, body)
    assert run.status.value == "completed", run.error
    return run.run_id


@pytest.fixture
async def history(engine: Engine, project: str) -> History:
    """Dark, light (+ a note), solarized, high contrast (the note deleted just before)."""
    await engine.put_group(project, "prefs", GROUP)
    before = datetime.now(UTC)
    instants, live, run_ids, note_id = [], [], [], ""
    for i, preference in enumerate(PREFERENCES):
        items = [("Preference", preference)] + ([("Note", BEES)] if i == 1 else [])
        if i == 3:
            await engine.delete_memory(project, "prefs", "ana", note_id)
        run_ids.append(await _change(engine, project, *items))
        if i == 1:
            run = await engine.get_run(project, run_ids[-1])
            assert run.committed_operations is not None
            note_id = next(
                op.memory_id
                for op in run.committed_operations.created
                if op.memory_id
                != bounded_memory_id(project, "prefs", "Preference", {"user_id": "ana"})
            )
        instants.append(datetime.now(UTC))
        live.append(await snapshot(engine, project, QUERY, group="prefs", user_id="ana"))
    return History(project, before, instants, live, run_ids, note_id)


async def test_each_instant_answers_as_it_did_then_in_every_mode_and_in_list(
    engine: Engine, history: History
) -> None:
    for i, at in enumerate(history.instants):
        then = await snapshot(
            engine, history.project, QUERY, group="prefs", user_id="ana", as_of=at
        )
        assert then == history.live[i], f"as of instant {i}"
        # The right answer, spelled out: the preference of then, in every mode.
        assert contents(then, "fetch")[0] == PREFERENCES[i]  # fetch puts bounded topics first
        for mode in ("vector", "bm25", "hybrid", "fetch", "list"):
            assert PREFERENCES[i] in contents(then, mode), (i, mode)
            assert not set(PREFERENCES) - {PREFERENCES[i]} & set(contents(then, mode)), (i, mode)
    # Created later: absent before; deleted later: present before, absent after.
    assert [BEES in contents(history.live[i], "list") for i in range(4)] == [
        False,
        True,
        True,
        False,
    ]
    # The default stays "current only".
    now = await snapshot(engine, history.project, QUERY, group="prefs", user_id="ana")
    assert now == history.live[-1]


async def test_before_the_first_write_nothing_was_there(engine: Engine, history: History) -> None:
    empty = await snapshot(
        engine, history.project, QUERY, group="prefs", user_id="ana", as_of=history.before
    )
    assert all(empty[mode] == [] for mode in MODES) and empty["list"] == ([], 0)


async def test_a_version_kept_without_a_vector_ranks_by_its_memorys_current_vector(
    engine: Engine, history: History
) -> None:
    """Versions kept before migration 0006 have no embedding: as-of vector search uses the
    memory's current vector for them (documented), and still finds them."""
    async with engine.database.db.begin() as conn:
        await conn.execute(
            text("UPDATE memory_versions SET embedding = NULL WHERE memory_id = :m"),
            {"m": history.preference_id},
        )
    [hit] = await search(
        engine, history.project, QUERY, "vector", group="prefs", user_id="ana",
        topics=["Preference"], as_of=history.instants[0],
    )  # fmt: skip
    [current] = [h for h in history.live[-1]["vector"] if h[0] == history.preference_id]
    assert (hit.content, hit.score) == (PREFERENCES[0], current[3])
    [bm25] = await search(
        engine, history.project, QUERY, "bm25", group="prefs", user_id="ana",
        topics=["Preference"], as_of=history.instants[0],
    )  # fmt: skip
    assert bm25.content == PREFERENCES[0]  # its own lexemes


def test_as_of_must_carry_its_offset() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        SearchRequest.model_validate({"query": "q", "as_of": "2026-01-01T00:00:00"})
    request = SearchRequest.model_validate({"query": "q", "as_of": "2026-01-01T01:00:00+01:00"})
    assert request.as_of == datetime(2026, 1, 1, tzinfo=UTC)


async def test_provenance_names_the_run_operation_and_input_of_every_version(
    engine: Engine, history: History
) -> None:
    found = await engine.memory_provenance(history.project, "prefs", "ana", history.preference_id)
    assert found.status.value == "active" and found.run_ids == history.run_ids
    assert [(v.version, v.operation, v.content) for v in found.versions] == [
        (1, "created", PREFERENCES[0]),
        (2, "updated", PREFERENCES[1]),
        (3, "updated", PREFERENCES[2]),
        (4, "updated", PREFERENCES[3]),
    ]
    for version, run_id in zip(found.versions, history.run_ids, strict=True):
        assert version.run_id == run_id and version.sources == []
        assert version.run is not None and version.run.raw_input_state == "retained"
        assert version.run.raw_input is not None
        items = version.run.raw_input["pre_extracted"]["items"]
        assert {"topic": "Preference", "content": version.content} in items
        # Pre-extracted facts carry no time of their own: they happened when added. A
        # rewrite rests on the old evidence and the new: its range runs from the first.
        first = found.versions[0].run
        assert first is not None and version.event_time == first.created_at
        assert version.event_time_end == version.run.created_at
    # Consecutive versions tile time: each ends when the next begins; the current one is open.
    for earlier, later in pairwise(found.versions):
        assert earlier.valid_to == later.valid_from
    assert found.versions[-1].valid_to is None
    # Runs -> memories: each run's committed operations name the memory.
    for i, run_id in enumerate(history.run_ids):
        run = await engine.get_run(history.project, run_id)
        assert run.committed_operations is not None
        kind = run.committed_operations.created if i == 0 else run.committed_operations.updated
        assert history.preference_id in [op.memory_id for op in kind]


async def test_provenance_of_a_deleted_memory_shows_the_delete(
    engine: Engine, history: History
) -> None:
    found = await engine.memory_provenance(history.project, "prefs", "ana", history.note_id)
    assert found.status.value == "archived"
    assert [(v.operation, v.run_id) for v in found.versions] == [
        ("created", history.run_ids[1]),
        ("deleted", None),  # through the API: no run wrote it
    ]
    assert found.versions[1].content == BEES and found.versions[1].run is None


async def test_a_redacted_or_expired_raw_input_shows_as_such(
    engine: Engine, history: History
) -> None:
    """Erasure (issue 11) may blank a run's raw input; retention may drop the run row."""
    async with engine.database.db.begin() as conn:
        await conn.execute(
            text("UPDATE runs SET raw_input = '{}'::jsonb WHERE run_id = :r"),
            {"r": history.run_ids[1]},
        )
        await conn.execute(
            text("UPDATE runs SET raw_input = '{\"redacted\": true}'::jsonb WHERE run_id = :r"),
            {"r": history.run_ids[2]},
        )
        await conn.execute(text("DELETE FROM runs WHERE run_id = :r"), {"r": history.run_ids[3]})
    found = await engine.memory_provenance(history.project, "prefs", "ana", history.preference_id)
    runs = [v.run for v in found.versions]
    assert [r.raw_input_state if r else None for r in runs] == [
        "retained", "redacted", "redacted", "missing",
    ]  # fmt: skip
    assert all(r is not None and r.raw_input is None for r in runs[1:])
    assert found.run_ids == history.run_ids  # the versions still name their runs


async def test_provenance_is_isolated_like_reading_the_memory(
    engine: Engine, history: History
) -> None:
    # bob is unknown in the project: a get names that (Engram's 422); the other project
    # has no such group (404 first). Provenance, mnemo's extension, answers 404 to all.
    for project, group, user, unknown in (
        (history.project, "prefs", "bob", True),
        (history.project, "default", "ana", False),
        ("another-project", "prefs", "ana", False),
    ):
        with pytest.raises(InvalidRequest if unknown else NotFound):
            await engine.get_memory(project, group, user, history.preference_id)
        with pytest.raises(NotFound):
            await engine.memory_provenance(project, group, user, history.preference_id)
