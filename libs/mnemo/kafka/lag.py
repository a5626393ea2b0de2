"""Consumer lag per group, topic and partition: the broker's end offset minus the group's
committed offset, read from the broker.

One exporter (the gateway) measures every stage's group, so the series count each
partition once however many replicas consume it, and they stay while a stage is down or
restarting (that is when lag grows). A group that has not committed on a partition yet
counts from the partition's first retained offset (stages start from the earliest).
Dashboards take `max by (group, topic, partition)` first, so several gateways export the
same value without doubling it.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import TopicPartition

from mnemo.kafka.channels import channel_names
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.group_offsets import GroupOffsets
from mnemo.kafka.metrics import CONSUMER_LAG
from mnemo.settings import SERVICES, KafkaSettings

log = logging.getLogger(__name__)

# The channels each stage consumes (the buffer's internal ticks aside).
SOURCES: dict[str, tuple[ChannelKind, ...]] = {
    "extractor": (ChannelKind.raw,),
    "buffer": (ChannelKind.extracted,),
    "transformer": (ChannelKind.batches,),
    "committer": (ChannelKind.drafts, ChannelKind.status, ChannelKind.consolidation),
}


def stage_groups(ks: KafkaSettings) -> dict[str, list[str]]:
    """Every stage's consumer group and the topics it consumes."""
    names = channel_names(ks)
    return {ks.group_id(s): [names.name(k) for k in SOURCES[s]] for s in SERVICES}


class LagMonitor:
    """Measures consumer groups' lag on their source topics into `CONSUMER_LAG`."""

    def __init__(self, bootstrap: str, groups: dict[str, list[str]]) -> None:
        self.bootstrap = bootstrap
        self.groups = groups
        self.offsets = GroupOffsets(bootstrap, groups)

    async def measure(self) -> dict[tuple[str, TopicPartition], int]:
        """Update the gauge; returns the lag of every (group, partition)."""
        lags = {key: at.lag for key, at in (await self.offsets.positions()).items()}
        for (group, tp), lag in lags.items():
            CONSUMER_LAG.labels(group, tp.topic, str(tp.partition)).set(lag)
        return lags

    async def run(self, every_seconds: float) -> None:
        """Measure every `every_seconds` until cancelled; failures are logged and retried."""
        while True:
            try:
                await self.measure()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # best effort: the broker may be down; the gateway goes on
                log.warning("consumer lag not measured (%s)", exc)
                await self.close()
            await asyncio.sleep(every_seconds)

    async def close(self) -> None:
        await self.offsets.close()
