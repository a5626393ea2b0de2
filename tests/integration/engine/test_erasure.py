"""Erasing a user in the embedded mode: nothing of theirs is left in any table, queued and
in-flight runs and pending buffers bring nothing back, and a later add starts afresh.

The proof is `tests.support.scan`: every column of every table (found in the catalog) is
searched for the user's tokens and id, before (it must find them) and after the erase.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from mnemo.clock import ManualClock
from mnemo.core import erasure as erasure_job
from mnemo.core.engine import Engine
from mnemo.core.transport import TransportUnavailable
from mnemo.domain.erasure import STOPPED_RUN_ERROR
from mnemo.domain.memory import RunState
from mnemo.domain.requests import InvalidRequest
from mnemo.embedded.startup import start_engine
from mnemo.embedded.ticker import tick
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.kafka.transport import KafkaTransport
from mnemo.settings import KafkaSettings
from mnemo.store import tombstones
from tests.integration.conftest import engine_settings, scripted_client, user_payload
from tests.integration.engine.helpers import Harness, add, add_and_wait, facts, listing, says
from tests.support import scan
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

GROUP = {
    "topics": [
        {"name": "Note", "description": "What the user notes.", "scoping": {"user_scoped": True}},
        {"name": "Digest", "description": "A day's notes.", "scoping": {"user_scoped": True}},
        {"name": "Profile", "description": "Who the user is.", "is_bounded": True,
         "scoping": {"user_scoped": True}},
        {"name": "Board", "description": "The team's shared board.",
         "scoping": {"user_scoped": False}},
    ],
    "pipeline": {"steps": [
        {"id": "extract", "kind": "extract", "input_type": "string", "next": "commit_notes"},
        {"id": "commit_notes", "kind": "commit", "next": "day"},
        {"id": "day", "kind": "buffer", "triggers": {"every_seconds": 86400}, "next": "digest"},
        {"id": "digest", "kind": "transform", "instructions": "Digest the day.",
         "output_topics": ["Digest"], "next": "commit"},
        {"id": "facts", "kind": "extract", "input_type": "pre_extracted", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip


def token(label: str) -> str:
    """A word no other test writes."""
    return f"{label}{uuid.uuid4().hex[:12]}"


def extract_lines(request: dict[str, Any]) -> dict[str, Any]:
    """Each input line is one memory; lines starting with 'board' go to the shared Board."""
    lines = user_payload(request)["input"]
    return {
        "memories": [
            {"topic": "Board" if line.startswith("board") else "Note", "content": line}
            for line in lines
        ]
    }


def digest(request: dict[str, Any]) -> dict[str, Any]:
    notes = " | ".join(m["content"] for m in user_payload(request)["memories"])
    return {"memories": [{"topic": "Digest", "content": f"Day: {notes}"}]}


@pytest.fixture
async def harness(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Harness]:
    clock = ManualClock(datetime(2026, 3, 1, 23, 0, tzinfo=UTC))
    settings = engine_settings(postgres.new_database(), tmp_path_factory.mktemp("erase"))
    engine = await start_engine(
        settings, llm=scripted_client(llm), embedder=HashEmbedder(), clock=clock, run_workers=False
    )
    llm.script("extract", extract_lines)
    llm.script("transform", digest)
    yield Harness(engine, clock)
    await engine.close()


async def put_group(h: Harness, project: str) -> None:
    await h.engine.put_group(project, "diary", GROUP)


async def note(h: Harness, project: str, user: str, *lines: str, **extra: Any) -> str:
    body = {"group": "diary", "user_id": user, "input": says(*lines), **extra}
    return (await add(h.engine, project, body)).run_id


async def profile(h: Harness, project: str, user: str, text: str) -> str:
    body = {"group": "diary", "user_id": user, "input": facts(("Profile", text))}
    return (await add(h.engine, project, body)).run_id


def hit_columns(hits: list[scan.Hit]) -> set[tuple[str, str]]:
    return {(h.table, h.column) for h in hits}


async def test_erase_leaves_no_trace_and_nothing_comes_back(harness: Harness, project: str) -> None:
    h, db = harness, harness.engine.db
    await put_group(h, project)
    victim, other = f"Vic-{uuid.uuid4().hex[:8]}", f"oth-{uuid.uuid4().hex[:8]}"
    vt = [token("zqv") for _ in range(8)]
    ot = [token("zqo") for _ in range(2)]
    # The victim's history: notes (one shared on the board, with a property), a profile
    # rewritten once (a version), all committed; the day's notes wait in the daily buffer.
    done = [
        await note(h, project, victim, f"tea {vt[0]}", f"board {vt[1]}",
                   properties={"source": vt[2]}),
        await profile(h, project, victim, f"Profile {vt[3]}"),
        await profile(h, project, victim, f"Profile {vt[4]}"),
        await note(h, project, other, f"coffee {ot[0]}"),
    ]  # fmt: skip
    await h.drain()
    assert [await h.status(project, r) for r in done] == ["completed"] * 4
    # Queued when the erase comes: two of the victim's runs and one of the other user's.
    queued = [
        await note(h, project, victim, f"read {vt[5]}"),
        await note(h, project, victim, f"cook {vt[6]}"),
    ]
    other_queued = await note(h, project, other, f"walk {ot[1]}")
    needles = [*vt[:7], victim]

    before = hit_columns(await scan.find(db, needles))
    assert {
        ("runs", "raw_input"), ("runs", "user_id"), ("runs", "properties"),
        ("memories", "content"), ("memories", "user_id"),
        ("memory_versions", "content"), ("buffer_items", "payload"),
    } <= before, before  # fmt: skip

    report = await h.engine.erase_user(project, victim.upper())  # ids are case-insensitive
    assert report.erased == report.memories == 3  # note, board, profile
    assert (report.versions, report.buffer_items, report.bus_records) == (1, 2, 2)
    assert (report.runs_redacted, report.runs_stopped) == (5, 2)
    assert await scan.find(db, needles) == []

    # The queued runs, and the daily buffer that flushes after midnight, bring nothing back.
    await h.drain()
    h.clock.advance(3601)
    assert await h.tick() == 1  # the other user's day only
    leftovers = await scan.find(db, needles)
    assert leftovers == [], scan.report(leftovers)
    for run_id in queued:
        run = await h.engine.get_run(project, run_id)
        assert (run.status, run.erased, run.user_id) == (RunState.failed, True, None)
        assert run.error == STOPPED_RUN_ERROR
    first = await h.engine.get_run(project, done[0])
    assert first.status == RunState.completed and first.erased
    assert first.committed_operations and first.committed_operations.created  # ids stay
    with pytest.raises(InvalidRequest, match="erased") as refused:
        await h.engine.retry_run(project, queued[0])
    assert refused.value.kind == "conflict"

    # The other user is untouched.
    assert await h.status(project, other_queued) == "completed"
    theirs = {m.content for m in await listing(h.engine, project, group="diary", user_id=other)}
    assert theirs >= {f"coffee {ot[0]}", f"walk {ot[1]}", f"Day: coffee {ot[0]} | walk {ot[1]}"}
    assert ("runs", "raw_input") in hit_columns(await scan.find(db, ot))

    # A later add for the same user id is a new start.
    again = await note(h, project, victim, f"paint {vt[7]}")
    await h.drain()
    run = await h.engine.get_run(project, again)
    assert run.status == RunState.completed and not run.erased
    mine = await listing(h.engine, project, group="diary", user_id=victim)
    assert [m.content for m in mine] == [f"paint {vt[7]}"]
    assert await scan.find(db, vt[:7]) == []


async def test_a_run_in_flight_during_the_erase_commits_nothing(
    harness: Harness, project: str, llm: ScriptedLLMServer
) -> None:
    h, db = harness, harness.engine.db
    await put_group(h, project)
    victim, secret = f"fly-{uuid.uuid4().hex[:8]}", token("zqf")
    extracting, release = threading.Event(), threading.Event()

    def slow_extract(request: dict[str, Any]) -> dict[str, Any]:
        extracting.set()
        release.wait(10)  # the worker is mid-run (its transaction open) while the erase runs
        return extract_lines(request)

    llm.script("extract", slow_extract)
    run_id = await note(h, project, victim, f"secret {secret}")
    worker = asyncio.create_task(h.pool.run_once())
    await asyncio.to_thread(extracting.wait, 10)
    report = await h.engine.erase_user(project, victim)
    assert (report.runs_redacted, report.runs_stopped) == (1, 1)
    assert report.bus_records == 0  # its record is held by the worker: skipped, not waited for
    release.set()
    assert await worker
    await h.drain()
    run = await h.engine.get_run(project, run_id)
    assert (run.status, run.erased) == (RunState.failed, True)
    leftovers = await scan.find(db, [secret, victim])
    assert leftovers == [], scan.report(leftovers)


async def test_a_flush_waiting_for_a_worker_is_erased_with_the_user(
    harness: Harness, project: str
) -> None:
    h, db = harness, harness.engine.db
    await put_group(h, project)
    victim, secret = f"fl-{uuid.uuid4().hex[:8]}", token("zqs")
    await note(h, project, victim, f"jog {secret}")
    await h.drain()
    h.clock.advance(3601)
    assert await tick(h.transport.runner) == 1  # the day's flush is queued, not yet run
    before = hit_columns(await scan.find(db, [secret]))
    assert ("bus_records", "payload") in before and ("buffer_items", "payload") not in before
    report = await h.engine.erase_user(project, victim)
    assert (report.bus_records, report.buffer_items) == (1, 0)
    await h.drain()
    leftovers = await scan.find(db, [secret, victim])
    assert leftovers == [], scan.report(leftovers)


async def test_the_tombstone_alone_stops_queued_runs_and_buffers(
    harness: Harness, project: str
) -> None:
    """The commit-time check on its own (as when a run is admitted while an erase is
    removing data): with only the tombstone written, queued runs and buffered items of runs
    admitted before it are dropped by the pipeline, and redacted there."""
    h, db = harness, harness.engine.db
    await put_group(h, project)
    victim = f"tomb-{uuid.uuid4().hex[:8]}"
    buffered, queued = token("zqb"), token("zqq")
    first = await note(h, project, victim, f"buffered {buffered}")
    await h.drain()  # committed, and held in the daily buffer
    second = await note(h, project, victim, f"queued {queued}")
    async with db.begin() as tx:
        await tombstones.record(tx, project, victim, None, h.clock.now())
    await h.drain()
    h.clock.advance(3601)
    assert await h.tick() == 0  # the buffer held only the erased user's items
    run = await h.engine.get_run(project, second)
    assert (run.status, run.erased, run.error) == (RunState.failed, True, STOPPED_RUN_ERROR)
    assert (await h.engine.get_run(project, first)).erased  # redacted by the buffer's flush
    leftovers = hit_columns(await scan.find(db, [queued, buffered]))
    # What was committed before the tombstone is the erase's own business (not run here).
    committed = {("memories", "content"), ("memories", "tsv"), ("memory_terms", "lexeme")}
    assert leftovers == committed, leftovers


async def test_erasing_one_memory_takes_its_versions_buffered_copies_and_sole_inputs(
    harness: Harness, project: str
) -> None:
    h, db = harness, harness.engine.db
    await put_group(h, project)
    user = f"mem-{uuid.uuid4().hex[:8]}"
    p1, p2, tea, board = token("zqp"), token("zqp"), token("zqt"), token("zqb")
    made = await profile(h, project, user, f"Profile {p1}")
    rewrote = await profile(h, project, user, f"Profile {p2}")
    both = await note(h, project, user, f"tea {tea}", f"board {board}")
    await h.drain()
    [profile_id] = [
        op.memory_id
        for op in (await h.engine.get_run(project, made)).committed_operations.created  # type: ignore[union-attr]
    ]
    await h.engine.erase_memory(project, "diary", user, profile_id)
    # Its versions went with it, and so did the raw input of the runs that only made it.
    assert await scan.find(db, [p1, p2]) == []
    assert (await h.engine.get_run(project, rewrote)).status == RunState.completed
    tea_id = next(
        m.id
        for m in await listing(h.engine, project, group="diary", user_id=user)
        if m.content == f"tea {tea}"
    )
    await h.engine.erase_memory(project, "diary", user, tea_id)
    # The run that made it made the board note too: its raw input keeps the text (the
    # user's erase or retention removes it); the copy waiting in the daily buffer is gone.
    assert hit_columns(await scan.find(db, [tea])) == {("runs", "raw_input")}
    h.clock.advance(3601)
    assert await h.tick() == 1
    digests = await listing(h.engine, project, group="diary", user_id=user, topics=["Digest"])
    assert [m.content for m in digests] == [f"Day: board {board}"]
    assert (await h.engine.get_run(project, both)).status == RunState.completed


async def test_an_erase_removes_nothing_when_the_raw_log_cannot_be_asked(
    engine: Engine, project: str
) -> None:
    """In the distributed mode the tombstone records where the raw topic ends; without the
    broker the erase answers 503 (retry later) rather than leave a half-made tombstone."""
    await add_and_wait(engine, project, {"user_id": "kim", "input": facts(("UserProfile", "Kim."))})
    unreachable = KafkaSettings(bootstrap_servers="127.0.0.1:9", produce_timeout_seconds=2)
    gateway = Engine(
        engine.settings, engine.database, engine.deps, engine.groups,
        KafkaTransport(unreachable, engine.db),
    )  # fmt: skip
    with pytest.raises(TransportUnavailable) as refused:
        await gateway.erase_user(project, "kim")
    assert refused.value.kind == "unavailable" and "nothing was erased" in refused.value.detail
    async with engine.db.connect() as conn:
        assert await tombstones.lookup(conn, project, "kim") is None
    assert [m.content for m in await listing(engine, project, user_id="kim")] == ["Kim."]


async def test_vacuum_full_and_a_checkpoint_clear_the_table_files(
    engine: Engine, project: str
) -> None:
    """What the README prescribes for physical erasure runs, and leaves no copy of the
    user's text in the tables' files (the WAL is the server's to recycle)."""
    secret = token("zqw")
    await add_and_wait(
        engine, project, {"user_id": "wal", "input": facts(("UserProfile", f"Wal {secret}."))}
    )
    tables = ("runs", "memories")
    await checkpoint(engine)
    assert [secret.encode() in await table_file(engine, t) for t in tables] == [True, True]
    await engine.erase_user(project, "wal")
    async with engine.db.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(
            text("VACUUM FULL runs, memories, memory_versions, drafts, buffer_items, bus_records")
        )
        await conn.execute(text("SELECT pg_switch_wal()"))
        await conn.execute(text("CHECKPOINT"))
    assert [secret.encode() in await table_file(engine, t) for t in tables] == [False, False]


async def checkpoint(engine: Engine) -> None:
    async with engine.db.connect() as conn:
        await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(
            text("CHECKPOINT")
        )


async def table_file(engine: Engine, table: str) -> bytes:
    """The bytes of the table's main data file (small test tables have one segment)."""
    async with engine.db.connect() as conn:
        path = (
            await conn.execute(
                text("SELECT current_setting('data_directory') || '/' || pg_relation_filepath(:t)"),
                {"t": table},
            )
        ).scalar_one()
    return await asyncio.to_thread(Path(path).read_bytes)


async def test_an_erase_cut_short_after_its_tombstone_is_finished_by_the_sweep(
    harness: Harness, project: str, postgres: EmbeddedPostgres, llm: ScriptedLLMServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:  # fmt: skip
    """kill -9 between the tombstone and the clean-up (issue 33, failure 2): the state it
    leaves is built here by writing the tombstone the way an erase does and stopping there.
    A sweep (the ticker's, which also runs at start-up) finishes the erase."""
    h, db = harness, harness.engine.db
    await put_group(h, project)
    victim, other = f"cut-{uuid.uuid4().hex[:8]}", f"oth-{uuid.uuid4().hex[:8]}"
    vt = [token("zqc") for _ in range(3)]
    done = [await note(h, project, victim, f"swim {t}") for t in vt]
    done.append(await note(h, project, other, "walk"))
    await h.drain()
    assert [await h.status(project, r) for r in done] == ["completed"] * 4

    position = await h.engine.transport.raw_log_position()
    await erasure_job._record_tombstone(db, project, victim, position, h.clock)  # then killed
    assert len(await listing(h.engine, project, group="diary", user_id=victim)) == 3

    # Within the grace period a sweep leaves it to the request that is about to clean up.
    assert await erasure_job.finish_pending_erasures(db, h.clock) == 0
    h.clock.advance(erasure_job.PENDING_GRACE_SECONDS + 1)
    assert await erasure_job.finish_pending_erasures(db, h.clock) == 1
    assert await listing(h.engine, project, group="diary", user_id=victim) == []
    leftovers = await scan.find(db, [*vt, victim])
    assert leftovers == [], scan.report(leftovers)
    async with db.connect() as conn:
        tombstone = await tombstones.lookup(conn, project, victim)
        completed = (
            await conn.execute(text("SELECT completed_at FROM erasures WHERE seq = :s"),
                               {"s": tombstone.seq if tombstone else -1})
        ).scalar_one()  # fmt: skip
    assert completed == h.clock.now()
    assert await erasure_job.finish_pending_erasures(db, h.clock) == 0  # done once
    assert [m.content for m in await listing(h.engine, project, group="diary", user_id=other)] == [
        "walk"
    ]


async def test_an_erase_reports_when_it_completed(harness: Harness, project: str) -> None:
    h = harness
    await put_group(h, project)
    user = f"rep-{uuid.uuid4().hex[:8]}"
    await note(h, project, user, "knit")
    await h.drain()
    report = await h.engine.erase_user(project, user)
    assert report.memories == 1 and report.completed_at == h.clock.now()
    db = h.engine.db
    assert await erasure_job.finish_pending_erasures(db, h.clock, 0) == 0
    async with db.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM pending_erasures"))).scalar() == 0
