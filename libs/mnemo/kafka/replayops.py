"""`mnemo replay`: re-run a group's retained raw log through another group's pipeline.

Reads the raw topic from the beginning, keeps the adds of `group` (and `project`, if given)
and publishes each again for `into` with a run id derived from the original one, so running
the replay twice adds no run twice. The extractor creates the new runs' rows. Records keep
their original key (their scope key), so per-scope order is kept when the new group scopes
like the old one. `root` is dropped: the new pipeline starts at its entry for the input type.
Skipped: an add the gateway refused (503; its record may still have reached the log, but its
run row was never kept), and a run's record seen again (a retry publishes it once more).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from aiokafka import AIOKafkaProducer
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.events.codec import decode, encode
from mnemo.events.raw import RawEvent, derived_run_id, replay_run_id
from mnemo.kafka.channels import channel_names
from mnemo.kafka.reader import Stored, producer, read_topic
from mnemo.settings import KafkaSettings
from mnemo.store import runs

CHUNK = 500  # records whose runs are looked up in one query


@dataclass
class Replayed:
    run_ids: list[str] = field(default_factory=list)  # the new runs, in log order
    refused: int = 0  # gateway adds answered 503: never processed, not replayed
    repeated: int = 0  # records of a run already replayed (retries)


async def replay_group(
    ks: KafkaSettings, db: AsyncEngine, group: str, into: str, project: str | None = None
) -> Replayed:
    """Publish the group's retained, accepted adds for `into`."""
    if group == into:
        raise ValueError("replay into a different group (a fresh one for the changed pipeline)")
    topic = channel_names(ks).raw
    p = await producer(ks.bootstrap_servers)
    out, seen = Replayed(), set[str]()
    chunk: list[tuple[Stored, RawEvent, str]] = []

    async def flush() -> None:
        gateway = [run_id for _, e, run_id in chunk if e.origin == "gateway"]
        async with db.connect() as conn:
            kept = await runs.accepted(conn, gateway)
        for stored, event, original in chunk:
            if event.origin == "gateway" and original not in kept:
                out.refused += 1
            elif original in seen:
                out.repeated += 1
            else:
                seen.add(original)
                out.run_ids.append(await _publish(p, topic, stored, event, into, original))
        chunk.clear()

    try:
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
                await flush()
        await flush()
    finally:
        await p.stop()
    return out


async def _publish(
    p: AIOKafkaProducer, topic: str, stored: Stored, event: RawEvent, into: str, original: str
) -> str:
    copy = event.model_copy(
        update={
            "group": into,
            "run_id": replay_run_id(into, original),
            "root": None,
            "origin": "external",  # no row yet: the extractor creates it
            "created_at": datetime.now(UTC),
        }
    )
    await p.send_and_wait(topic, encode(copy), key=stored.key)
    return copy.run_id or ""
