"""Erasing a user in the distributed mode: with runs queued in the raw topic (the extractor
stopped), an outside producer's record among them, a buffer pending in the buffer service's
table and sliding windows in the extractor's, then `mnemo replay` and `mnemo dlq replay`:
no table holds the user's text afterwards (`tests.support.scan`), nor does the latest state
of the services' table changelogs, and a later add for the same user id starts afresh."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from sqlalchemy import text

from mnemo.core import erasure as erasure_job
from mnemo.domain.erasure import STOPPED_RUN_ERROR
from mnemo.domain.memory import RunState
from mnemo.domain.requests import AddRequest, NotFound
from mnemo.kafka.channels import channel_names, ensure_channels
from mnemo.kafka.dlqops import replay_dlq
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.reader import read_topic
from mnemo.kafka.replayops import replay_group
from tests.integration.engine.helpers import listing
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import wait_all
from tests.support import scan

pytestmark = pytest.mark.kafka

GROUP = {
    "topics": [{"name": "Facts", "description": "Facts about the user.",
                "scoping": {"user_scoped": True}}],
    "pipeline": {"steps": [
        {"id": "window", "kind": "buffer", "mode": "sliding_window", "window": 3,
         "input_type": "string", "next": "extract"},
        {"id": "extract", "kind": "extract", "input_type": "conversation", "next": "hold"},
        {"id": "hold", "kind": "buffer", "triggers": {"count": 2, "idle_seconds": 30},
         "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip
# A daily buffer: it does not flush during the test, so only the buffer service's sweep can
# take an erased user's items out of its table.
DAILY = {
    "topics": GROUP["topics"],
    "pipeline": {"steps": [
        {"id": "extract", "kind": "extract", "input_type": "string", "next": "day"},
        {"id": "day", "kind": "buffer", "triggers": {"every_seconds": 86400}, "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
}  # fmt: skip


async def run_rows(cluster: Cluster, run_ids: list[str]) -> list[tuple[Any, ...]]:
    """What an erase looks at in each run row (for a failure's message)."""
    query = text(
        "SELECT run_id, user_id, admitted_seq, status, redaction, admitted_at FROM runs"
        " WHERE run_id = ANY(:ids) ORDER BY admitted_seq"
    )
    async with cluster.engine.db.connect() as conn:
        seq = (await conn.execute(text("SELECT last_value FROM run_admission_seq"))).scalar()
        rows = [tuple(r) for r in await conn.execute(query, {"ids": run_ids})]
    return [("run_admission_seq last_value", seq), *rows]


def token() -> str:
    return f"zqk{uuid.uuid4().hex[:12]}"


async def add(cluster: Cluster, project: str, group: str, user: str, text: str) -> str:
    body = {"group": group, "user_id": user, "input": {"string": {"content": [text]}}}
    return (await cluster.engine.add(project, AddRequest.model_validate(body))).run_id


async def status(cluster: Cluster, project: str, run_id: str) -> str:
    try:
        return (await cluster.engine.get_run(project, run_id)).status.value
    except NotFound:
        return "missing"


async def wait_for(cluster: Cluster, project: str, run_ids: list[str], wanted: set[str]) -> None:
    deadline = asyncio.get_running_loop().time() + 90
    while True:
        seen = [await status(cluster, project, r) for r in run_ids]
        if set(seen) <= wanted:
            return
        assert asyncio.get_running_loop().time() < deadline, f"{seen}\n{service_logs(cluster)}"
        await asyncio.sleep(0.3)


async def latest_table_values(cluster: Cluster) -> str:
    """The last value of every key of the buffer and window tables' changelogs: what a
    restarted service restores (older values go at compaction)."""
    ks = cluster.ks
    latest: dict[tuple[str, bytes | None], bytes | None] = {}
    for topic in (f"{ks.group_id('buffer')}-buffers-changelog",
                  f"{ks.group_id('extractor')}-windows-changelog"):  # fmt: skip
        async for stored in read_topic(ks.bootstrap_servers, topic):
            latest[(topic, stored.key)] = stored.value
    assert latest, "no changelog records: the tables were not exercised"
    return "\n".join((v or b"").decode() for v in latest.values()).lower()


async def produce_external(cluster: Cluster, event: dict[str, Any], key: str) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=cluster.ks.bootstrap_servers, acks="all")
    await producer.start()
    try:
        raw = channel_names(cluster.ks).raw
        await producer.send_and_wait(raw, json.dumps(event).encode(), key=key.encode())
    finally:
        await producer.stop()


async def test_erase_with_queued_runs_pending_buffers_and_a_replay(
    cluster: Cluster, project: str
) -> None:
    await cluster.engine.put_group(project, "ke", GROUP)
    await cluster.engine.put_group(project, "kd", DAILY)
    victim, other = f"Kvic-{uuid.uuid4().hex[:8]}", f"koth-{uuid.uuid4().hex[:8]}"
    vt, ot = [token() for _ in range(7)], [token() for _ in range(4)]
    # Committed (a count-2 flush), then one waiting in the buffer (idle trigger), per user.
    done = [await add(cluster, project, "ke", u, f"I like {t}")
            for u, t in ((victim, vt[0]), (victim, vt[1]), (other, ot[0]), (other, ot[1]))]  # fmt: skip
    await wait_all(cluster.engine, project, done, timeout=90)
    waiting = [await add(cluster, project, "ke", victim, f"I read {vt[2]}"),
               await add(cluster, project, "ke", other, f"I read {ot[2]}"),
               await add(cluster, project, "kd", victim, f"I nap {vt[6]}")]  # fmt: skip
    await wait_for(cluster, project, waiting, {"in_buffer"})
    # Queued: the extractor is down; two gateway adds and one outside producer's record.
    extractor = cluster.services["extractor"]
    extractor.stop()
    try:
        queued = [await add(cluster, project, "ke", victim, f"I cook {vt[3]}"),
                  await add(cluster, project, "ke", victim, f"I swim {vt[4]}")]  # fmt: skip
        outside = RawEvent.model_validate(
            {"project": project, "group": "ke", "user_id": victim,
             "input": {"string": {"content": [f"I sing {vt[5]}"]}}}
        )  # fmt: skip
        await produce_external(
            cluster, outside.model_dump(mode="json", exclude_none=True),
            outside.scope_key_for(set()),
        )  # fmt: skip
        other_queued = await add(cluster, project, "ke", other, f"I walk {ot[3]}")
        needles = [*vt, victim]
        before = {(h.table, h.column) for h in await scan.find(cluster.engine.db, needles)}
        assert {("runs", "raw_input"), ("runs", "user_id"), ("memories", "content")} <= before
        report = await cluster.engine.erase_user(project, victim)
        victims = [*done[:2], waiting[0], waiting[2], *queued]
        assert (report.memories, report.runs_redacted) == (2, 6), (
            report,
            await run_rows(cluster, victims),
        )
        assert report.runs_stopped == 4, report  # two in buffers, two queued
    finally:
        extractor.start()
    await asyncio.to_thread(extractor.wait_ready)
    await wait_for(cluster, project, [*queued, *waiting], {"failed", "completed"})
    await wait_all(cluster.engine, project, [other_queued, waiting[1]], timeout=90)
    await asyncio.sleep(4)  # ticks: the services sweep their tables
    for run_id in [*queued, waiting[0], waiting[2]]:
        run = await cluster.engine.get_run(project, run_id)
        assert (run.status, run.erased, run.user_id) == (RunState.failed, True, None)
        assert run.error == STOPPED_RUN_ERROR
    leftovers = await scan.find(cluster.engine.db, needles)
    assert leftovers == [], scan.report(leftovers)
    tables = await latest_table_values(cluster)
    assert not [n for n in needles if n.lower() in tables], tables
    assert any(t in tables for t in ot), "the other user's window entries should remain"

    # `mnemo replay` into a new group skips every record of the erased user.
    await cluster.engine.put_group(project, "ke2", GROUP)
    replayed = await replay_group(cluster.ks, cluster.engine.db, "ke", "ke2", project)
    assert replayed.skipped == {"erased": 6} and len(replayed.run_ids) == 4, replayed  # "ke" only
    await wait_all(cluster.engine, project, replayed.run_ids, timeout=90)
    leftovers = await scan.find(cluster.engine.db, needles)
    assert leftovers == [], scan.report(leftovers)
    theirs = {m.content for m in await memories_of(cluster, project, "ke2", other)}
    assert theirs == {f"User said: I {verb} {t}" for verb, t in zip(
        ("like", "like", "read", "walk"), ot, strict=True)}  # fmt: skip

    # A later add for the same user id is a new start.
    fresh = token()
    again = await add(cluster, project, "ke", victim, f"I paint {fresh}")
    await asyncio.sleep(0.5)
    await add(cluster, project, "ke", victim, f"I draw {fresh}")  # count 2 flushes at once
    await wait_all(cluster.engine, project, [again], timeout=90)
    assert (await cluster.engine.get_run(project, again)).erased is False
    mine = {m.content for m in await memories_of(cluster, project, "ke", victim)}
    assert f"User said: I paint {fresh}" in mine and not any(t in str(mine) for t in vt)


async def memories_of(cluster: Cluster, project: str, group: str, user: str) -> list[Any]:
    from mnemo.domain.requests import ListRequest

    request = ListRequest.model_validate({"group": group, "user_id": user, "limit": 100})
    found, _ = await cluster.engine.list_memories(project, request)
    return found


async def test_dlq_replay_skips_an_erased_users_records(cluster: Cluster, project: str) -> None:
    victim, other = f"dvic-{uuid.uuid4().hex[:8]}", f"doth-{uuid.uuid4().hex[:8]}"
    secret, kept = token(), token()
    cluster.llm.fail("extract", status=500, times=4)  # 2 attempts per run: both fail
    failed = [await add(cluster, project, "kt", victim, f"I hide {secret}"),
              await add(cluster, project, "kt", other, f"I keep {kept}")]  # fmt: skip
    await wait_all(cluster.engine, project, failed, timeout=60, status="failed")
    await cluster.engine.erase_user(project, victim)
    outcome = await replay_dlq(cluster.ks, cluster.engine.db)
    skipped = {r: reason for e, reason in outcome.skipped for r in e.record.run_ids}
    replayed = {r for e in outcome.replayed for r in e.record.run_ids}
    assert skipped.get(failed[0]) == "erased" and failed[1] in replayed, outcome
    await wait_all(cluster.engine, project, [failed[1]], timeout=60)
    run = await cluster.engine.get_run(project, failed[0])
    assert (run.status, run.erased) == (RunState.failed, True)
    leftovers = await scan.find(cluster.engine.db, [secret, victim])
    assert leftovers == [], scan.report(leftovers)


async def test_retention_configs_of_topics_and_changelogs(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    ks = cluster.ks.model_copy(update={"raw_retention_ms": 86_400_000})
    with caplog.at_level(logging.WARNING, logger="mnemo.kafka.channels"):
        await ensure_channels(ks)  # the topics exist: their retention is not changed
    assert "retention.ms=-1 but 86400000 is configured" in caplog.text
    assert "kafka-configs.sh" in caplog.text
    admin = AIOKafkaAdminClient(bootstrap_servers=ks.bootstrap_servers)
    await admin.start()
    try:
        changelog = f"{ks.group_id('buffer')}-buffers-changelog"
        wanted = {"max.compaction.lag.ms": None, "cleanup.policy": None}
        [response] = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, changelog, wanted)]
        )
        entries = {e[0]: e[1] for e in response.resources[0][4]}
    finally:
        await admin.close()
    assert entries == {"max.compaction.lag.ms": "86400000", "cleanup.policy": "compact"}


async def test_an_erase_cut_short_is_finished_by_the_committers_sweep(
    cluster: Cluster, project: str
) -> None:
    """kill -9 between the tombstone and the clean-up (issue 33, failure 2), in the
    distributed mode: the state it leaves is built by writing the tombstone the way an
    erase does and stopping there; the committer's retention sweep finishes the erase."""
    victim = f"kcut-{uuid.uuid4().hex[:8]}"
    secret = token()
    done = [await add(cluster, project, "kt", victim, f"I like {secret}") for _ in range(2)]
    await wait_all(cluster.engine, project, done, timeout=90)
    assert await listing(cluster.engine, project, group="kt", user_id=victim)
    engine = cluster.engine
    position = await engine.transport.raw_log_position()
    await erasure_job._record_tombstone(engine.db, project, victim, position, engine.deps.clock)
    deadline = asyncio.get_running_loop().time() + 180  # grace + one sweep interval (60 s)
    while await listing(engine, project, group="kt", user_id=victim):
        assert asyncio.get_running_loop().time() < deadline, service_logs(cluster)
        await asyncio.sleep(1.0)
    leftovers = await scan.find(engine.db, [secret, victim])
    assert leftovers == [], scan.report(leftovers)
    async with engine.db.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM pending_erasures"))).scalar() == 0
