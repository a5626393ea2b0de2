"""`mnemo dlq list|replay`: read dead-lettered records and re-drive them.

Replay publishes a `running` status for the record's runs (reopening them if they failed;
keyed like the record, so it precedes any new failure on the same status partition), then
the original payload to its source topic with its original key and a `mnemo-replay-of`
header naming the DLQ entry. Entries already replayed are remembered as the committed
offset of the `{prefix}-dlq-replay` consumer group. Entries whose content is forgotten (an
erased user's, raw input past retention) are not re-published: they are reported as
skipped, and remembered like replayed ones. A record that fails again after a replay comes
back as a new entry marked `replay_of`: replaying "all" skips those too (reason
`failed_after_replay`), so a bad record is not re-driven into the DLQ on every run;
`--offset` replays one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import OffsetAndMetadata
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.domain.memory import RunState
from mnemo.kafka.channels import channel_names
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.codec import decode, encode
from mnemo.kafka.events.dlq import DlqRecord
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.events.status import RunStatusEvent
from mnemo.kafka.forgetting import RawRecordFilter, gone_runs
from mnemo.kafka.reader import Stored, producer, read_topic
from mnemo.settings import KafkaSettings

REPLAY_HEADER = "mnemo-replay-of"


@dataclass(frozen=True)
class DlqEntry:
    partition: int  # in the DLQ topic (the record's own partition/offset are its source's)
    offset: int
    record: DlqRecord


def replay_group(ks: KafkaSettings) -> str:
    return f"{ks.topic_prefix}-dlq-replay"


async def list_dlq(ks: KafkaSettings, start: dict[int, int] | None = None) -> list[DlqEntry]:
    """The DLQ's records (from `start`, default the beginning), oldest first."""
    out = []
    async for stored in read_topic(ks.bootstrap_servers, channel_names(ks).dlq, start):
        out.append(DlqEntry(stored.partition, stored.offset, decode(DlqRecord, stored.value)))
    return out


@dataclass
class DlqReplay:
    """The entries re-driven, and those skipped with the reason: what they carry is
    forgotten (an erased user's, raw input past retention), or they failed again after a
    replay (`failed_after_replay`, replayed only when named by offset)."""

    replayed: list[DlqEntry] = field(default_factory=list)
    skipped: list[tuple[DlqEntry, str]] = field(default_factory=list)


async def replay_dlq(
    ks: KafkaSettings, db: AsyncEngine, offsets: list[int] | None = None
) -> DlqReplay:
    """Re-drive the given DLQ offsets, or every entry not replayed (or skipped) before."""
    admin = AIOKafkaAdminClient(bootstrap_servers=ks.bootstrap_servers)
    await admin.start()
    try:
        done = await admin.list_consumer_group_offsets(replay_group(ks))
        start = {tp.partition: meta.offset for tp, meta in done.items() if meta.offset >= 0}
        again: list[DlqEntry] = []
        if offsets is not None:
            entries = [e for e in await list_dlq(ks) if e.offset in set(offsets)]
        else:
            unseen = await list_dlq(ks, start)
            entries = [e for e in unseen if e.record.replay_of is None]
            again = [e for e in unseen if e.record.replay_of is not None]
        outcome = await _screen(db, entries)
        outcome.skipped += [(e, "failed_after_replay") for e in again]
        await _republish(ks, outcome.replayed)
        if offsets is None and (entries or again):
            await _remember(ks, [*entries, *again])
        return outcome
    finally:
        await admin.close()


async def _screen(db: AsyncEngine, entries: list[DlqEntry]) -> DlqReplay:
    """Split the entries into those to replay and those whose content is forgotten."""
    outcome = DlqReplay()
    async with db.connect() as conn:
        present, gone = await gone_runs(conn, (r for e in entries for r in e.record.run_ids))
        check = RawRecordFilter(conn, datetime.now(UTC))
        for entry in entries:
            reason = next((gone[r] for r in entry.record.run_ids if r in gone), None)
            raw = _raw_without_row(entry, present)
            if reason is None and raw is not None:
                stored = Stored(entry.record.source_topic, entry.record.partition,
                                entry.record.offset, None, None)  # fmt: skip
                reason = await check.skip(stored, raw, entry.record.run_ids[0], present, gone)
            if reason is None:
                outcome.replayed.append(entry)
            else:
                outcome.skipped.append((entry, reason))
    return outcome


def _raw_without_row(entry: DlqEntry, present: set[str]) -> RawEvent | None:
    """The raw add an entry carries when its run has no row yet (an outside producer's add
    that failed before its row was written): only its tombstone can tell."""
    r = entry.record
    if r.source_topic.split(".")[-2:-1] != ["raw"] or len(r.run_ids) != 1:
        return None
    if r.run_ids[0] in present:
        return None
    try:
        return decode(RawEvent, r.payload)
    except (ValidationError, ValueError):
        return None


def _payload(record: DlqRecord) -> bytes:
    """The value to re-publish. A raw add that had no run id keeps the one it was tracked
    under (derived from its first offset), so the replay completes that run."""
    if len(record.run_ids) == 1 and record.source_topic.split(".")[-2:-1] == ["raw"]:
        try:
            value = json.loads(record.payload)
        except ValueError:
            return record.payload.encode()
        if isinstance(value, dict) and not value.get("run_id"):
            return json.dumps({**value, "run_id": record.run_ids[0]}).encode()
    return record.payload.encode()


async def _remember(ks: KafkaSettings, entries: list[DlqEntry]) -> None:
    """Commit past the replayed entries as the replay group's offsets."""
    dlq = channel_names(ks).dlq
    commit: dict[TopicPartition, OffsetAndMetadata] = {}
    for e in entries:
        commit[TopicPartition(dlq, e.partition)] = OffsetAndMetadata(e.offset + 1, "")
    consumer = AIOKafkaConsumer(
        bootstrap_servers=ks.bootstrap_servers,
        group_id=replay_group(ks),
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        consumer.assign(list(commit))
        await consumer.commit(commit)
    finally:
        await consumer.stop()


async def _republish(ks: KafkaSettings, entries: list[DlqEntry]) -> None:
    names = channel_names(ks)
    p = await producer(ks.bootstrap_servers)
    try:
        for entry in entries:
            r = entry.record
            key = (r.key or "").encode()
            if r.run_ids:
                status = RunStatusEvent(
                    run_ids=r.run_ids,
                    status=RunState.running,
                    scope_key=r.key or "",
                    at=datetime.now(UTC),
                    service="dlq-replay",
                )
                await p.send_and_wait(names.name(ChannelKind.status), encode(status), key=key)
            marker = [(REPLAY_HEADER, f"{entry.partition}:{entry.offset}".encode())]
            await p.send_and_wait(r.source_topic, _payload(r), key=key or None, headers=marker)
    finally:
        await p.stop()
