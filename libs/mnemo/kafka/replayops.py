"""`mnemo replay`: re-run a group's retained raw log through another group's pipeline.

Reads the raw topic from the beginning, keeps the adds of `group` (and `project`, if given)
and publishes each again for `into` with a run id derived from the original one, so running
the replay twice adds no run twice. The extractor creates the new runs' rows. Records keep
their original key (their scope key), so per-scope order is kept when the new group scopes
like the old one. `root` is dropped: the new pipeline starts at its entry for the input type.

Nothing forgotten comes back: records of erased users, records whose run's raw input was
redacted (retention, an erased memory) or that are older than the group's `raw_input_days`
are skipped and counted by reason (`mnemo.kafka.forgetting`), and so are adds the gateway
refused (503; the record may still have reached the log, but no run row was kept) and a
run's record seen again (a retry publishes it once more). A replayed add keeps its event
time: the record's own `created_at`, else the time the broker appended it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from aiokafka import AIOKafkaProducer
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.kafka.channels import channel_names
from mnemo.kafka.events.codec import decode, encode
from mnemo.kafka.events.raw import RawEvent, derived_run_id, replay_run_id
from mnemo.kafka.forgetting import RawRecordFilter, gone_runs
from mnemo.kafka.reader import Stored, producer, read_topic
from mnemo.settings import KafkaSettings

CHUNK = 200  # records checked against Postgres together


@dataclass
class ReplayReport:
    """The new run ids in log order, and how many records were skipped, by reason."""

    run_ids: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    seen: set[str] = field(default_factory=set)  # original run ids already published


async def replay_group(
    ks: KafkaSettings, db: AsyncEngine, group: str, into: str, project: str | None = None
) -> ReplayReport:
    """Publish the group's retained adds, minus forgotten, refused and repeated ones, for
    `into`."""
    if group == into:
        raise ValueError("replay into a different group (a fresh one for the changed pipeline)")
    topic = channel_names(ks).raw
    report = ReplayReport()
    p = await producer(ks.bootstrap_servers)
    try:
        async with db.connect() as conn:
            check = RawRecordFilter(conn, datetime.now(UTC))
            chunk: list[tuple[Stored, RawEvent, str]] = []
            async for stored in read_topic(ks.bootstrap_servers, topic):
                try:
                    event = decode(RawEvent, stored.value)
                except (ValidationError, ValueError):
                    continue  # poison records are the DLQ's business
                if event.group != group or (project is not None and event.project != project):
                    continue
                original = event.run_id or derived_run_id(topic, stored.partition, stored.offset)
                chunk.append((stored, event, original))
                if len(chunk) >= CHUNK:
                    await _publish(p, check, chunk, into, report)
                    chunk = []
            await _publish(p, check, chunk, into, report)
    finally:
        await p.stop()
    return report


async def _publish(
    p: AIOKafkaProducer,
    check: RawRecordFilter,
    chunk: list[tuple[Stored, RawEvent, str]],
    into: str,
    report: ReplayReport,
) -> None:
    present, gone = await gone_runs(check.conn, (original for _, _, original in chunk))
    for stored, event, original in chunk:
        reason = await check.skip(stored, event, original, present, gone)
        if reason is None and original in report.seen:
            reason = "repeated"
        if reason is not None:
            report.skipped[reason] += 1
            continue
        report.seen.add(original)
        copy = event.model_copy(
            update={
                "group": into,
                "run_id": replay_run_id(into, original),
                "root": None,
                "origin": "external",  # no row yet: the extractor creates it
                "created_at": event.created_at or stored.timestamp,
            }
        )
        await p.send_and_wait(stored.topic, encode(copy), key=stored.key)
        report.run_ids.append(copy.run_id or "")
