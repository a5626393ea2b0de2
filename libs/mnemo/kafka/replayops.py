"""`mnemo replay`: re-run a group's retained raw log through another group's pipeline.

Reads the raw topic from the beginning, keeps the adds of `group` (and `project`, if given)
and publishes each again for `into` with a run id derived from the original one, so running
the replay twice adds no run twice. The extractor creates the new runs' rows. Records keep
their original key (their scope key), so per-scope order is kept when the new group scopes
like the old one. `root` is dropped: the new pipeline starts at its entry for the input type.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import ValidationError

from mnemo.events.codec import decode, encode
from mnemo.events.raw import RawEvent, derived_run_id, replay_run_id
from mnemo.kafka.channels import channel_names
from mnemo.kafka.reader import producer, read_topic
from mnemo.settings import KafkaSettings


async def replay_group(
    ks: KafkaSettings, group: str, into: str, project: str | None = None
) -> list[str]:
    """Publish the group's retained adds for `into`; returns the new run ids in log order."""
    if group == into:
        raise ValueError("replay into a different group (a fresh one for the changed pipeline)")
    topic = channel_names(ks).raw
    p = await producer(ks.bootstrap_servers)
    run_ids: list[str] = []
    try:
        async for stored in read_topic(ks.bootstrap_servers, topic):
            try:
                event = decode(RawEvent, stored.value)
            except (ValidationError, ValueError):
                continue  # poison records are the DLQ's business
            if event.group != group or (project is not None and event.project != project):
                continue
            original = event.run_id or derived_run_id(topic, stored.partition, stored.offset)
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
            run_ids.append(copy.run_id or "")
    finally:
        await p.stop()
    return run_ids
