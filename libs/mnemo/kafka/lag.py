"""Consumer lag per group, topic and partition: the broker's end offset minus the group's
committed offset, read from the broker.

One exporter (the gateway) measures every stage's group, so the series count each
partition once however many replicas consume it, and they stay while a stage is down or
restarting (that is when lag grows). A group that has not committed on a partition yet
counts from the partition's first retained offset (stages start from the earliest).
Dashboards take `max by (group, topic, partition)` first, so several gateways export the
same value without doubling it.

While the lag cannot be read (a broker outage), the gauge keeps its last values, so they
are marked: `mnemo_kafka_consumer_lag_stale` is 1 and `mnemo_kafka_consumer_lag_age_seconds`
says how old they are; /readyz (an advisory check) and `mnemo status` say so too.
"""

from __future__ import annotations

import asyncio
import logging
import time

from aiokafka import TopicPartition

from mnemo.core.failures import describe
from mnemo.kafka.channels import channel_names
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.group_offsets import GroupOffsets
from mnemo.kafka.metrics import CONSUMER_LAG, CONSUMER_LAG_AGE, CONSUMER_LAG_STALE
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
        self.measured_at: float | None = None  # monotonic time of the last good reading
        self.failure: str | None = None  # why the last reading failed, until one works

    def age(self) -> float | None:
        """Seconds since the lag was last read, None if never."""
        return None if self.measured_at is None else time.monotonic() - self.measured_at

    def stale(self) -> str | None:
        """Why the exported lag is not current (None when it is)."""
        if self.failure is None:
            return None
        age = self.age()
        when = "never read" if age is None else f"last read {age:.0f} s ago"
        return f"consumer lag is stale ({when}): {self.failure}"

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
                self.measured_at, self.failure = time.monotonic(), None
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # best effort: the broker may be down; the gateway goes on
                log.warning("consumer lag not measured (%s)", exc)
                self.failure = describe(exc, 200)
                await self.close()
            age = self.age()
            CONSUMER_LAG_AGE.set(-1 if age is None else age)
            CONSUMER_LAG_STALE.set(0 if self.failure is None else 1)
            await asyncio.sleep(every_seconds)

    async def close(self) -> None:
        await self.offsets.close()
