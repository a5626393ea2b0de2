"""Reading a topic from a start offset up to its current end (the DLQ, the raw log)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from mnemo.kafka.producer import IDEMPOTENT


@dataclass(frozen=True)
class Stored:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: datetime | None = None  # the broker's record timestamp


async def read_topic(
    bootstrap: str, topic: str, start: dict[int, int] | None = None
) -> AsyncIterator[Stored]:
    """Every record from `start` (partition -> offset; default the beginning) to the end as
    it was when reading began, partition by partition in offset order."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in (await partitions(bootstrap, [topic]))[topic]]
        if not tps:
            return
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        firsts = await consumer.beginning_offsets(tps)
        for tp in tps:
            consumer.seek(tp, max(firsts[tp], (start or {}).get(tp.partition, 0)))
        open_tps = {tp for tp in tps if ends[tp] > firsts[tp]}
        while open_tps:
            batches = await consumer.getmany(*open_tps, timeout_ms=1000)
            for tp, messages in sorted(batches.items()):
                for m in messages:
                    if m.offset < ends[tp]:
                        stamp = (
                            datetime.fromtimestamp(m.timestamp / 1000, UTC) if m.timestamp else None
                        )
                        yield Stored(topic, tp.partition, m.offset, m.key, m.value, stamp)
            for tp in list(open_tps):
                if await consumer.position(tp) >= ends[tp]:
                    open_tps.discard(tp)
    finally:
        await consumer.stop()


async def partitions(bootstrap: str, topics: list[str]) -> dict[str, list[int]]:
    """The partition ids of each topic (empty for a topic that does not exist)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(topics)
    finally:
        await admin.close()
    out: dict[str, list[int]] = {t: [] for t in topics}
    for info in described:
        if not info.get("error_code"):
            out[info["topic"]] = sorted(p["partition"] for p in info["partitions"])
    return out


async def producer(bootstrap: str) -> AIOKafkaProducer:
    """An acks=all idempotent producer, started."""
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, **IDEMPOTENT)
    await p.start()
    return p
