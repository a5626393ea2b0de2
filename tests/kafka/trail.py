"""Where a stuck run's records are: each record of the pipeline channels that names the
run, beside how far each stage's consumer group has committed on that partition. A record
below its consumer's committed offset that the stage never processed was skipped."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from mnemo.kafka.lag import stage_groups
from mnemo.settings import KafkaSettings


async def record_trail(ks: KafkaSettings, run_ids: list[str]) -> list[str]:
    # topic -> the stage group consuming it (whose committed offsets are read on it)
    topics = {t: group for group, ts in stage_groups(ks).items() for t in ts}
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
            group = topics[tp.topic]
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
