"""Where a stuck run's records are: each record of the pipeline channels that names the
run, beside how far each stage's consumer group has committed on that partition. A record
below its consumer's committed offset that the stage never processed was skipped."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from mnemo.events.channels import ChannelKind
from mnemo.kafka.channels import channel_names
from mnemo.settings import KafkaSettings

# The channel a stage consumes (its group's committed offsets are read on it).
CONSUMERS = {
    ChannelKind.raw: "extractor",
    ChannelKind.extracted: "buffer",
    ChannelKind.batches: "transformer",
    ChannelKind.drafts: "committer",
    ChannelKind.status: "committer",
}


async def record_trail(ks: KafkaSettings, run_ids: list[str]) -> list[str]:
    names = channel_names(ks)
    topics = {names.name(kind): service for kind, service in CONSUMERS.items()}
    tps = [TopicPartition(t, p) for t in topics for p in range(ks.partitions)]
    consumer = AIOKafkaConsumer(bootstrap_servers=ks.bootstrap_servers, enable_auto_commit=False)
    admin = AIOKafkaAdminClient(bootstrap_servers=ks.bootstrap_servers)
    await consumer.start()
    await admin.start()
    try:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        found: list[tuple[TopicPartition, int]] = []
        deadline = asyncio.get_running_loop().time() + 30
        while any([await consumer.position(tp) < ends[tp] for tp in tps]):
            if asyncio.get_running_loop().time() > deadline:
                break
            for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                found += [
                    (tp, r.offset) for r in records
                    if r.value and any(run.encode() in r.value for run in run_ids)
                ]  # fmt: skip
        lines = []
        for tp, offset in found:
            group = ks.group_id(topics[tp.topic])
            committed = await admin.list_consumer_group_offsets(group, partitions=[tp])
            mark = committed.get(tp)
            lines.append(
                f"  record {tp.topic}[{tp.partition}]@{offset} (end {ends[tp]}); "
                f"{group} committed {mark.offset if mark else None}"
            )
        return lines or ["  no record of these runs in the pipeline channels"]
    finally:
        await consumer.stop()
        await admin.close()
