"""The backlog family, one in both modes: `mnemo_backlog_records{kind}` and
`mnemo_backlog_oldest_seconds{kind}`.

The gateway measures it from the queue itself when it is scraped (the embedded bus's table,
or in Kafka mode each channel's committed offsets), so it is exact at that moment and never
doubled by several worker processes or stage replicas.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from mnemo.core.failures import describe
from mnemo.core.transport import Backlog, RunTransport

log = logging.getLogger(__name__)

RECORDS = "mnemo_backlog_records"
OLDEST = "mnemo_backlog_oldest_seconds"
MEASURE_SECONDS = 3.0


async def measure(transport: RunTransport) -> list[Backlog] | None:
    """The transport's backlog now; None (logged) when the queue does not answer in time."""
    try:
        async with asyncio.timeout(MEASURE_SECONDS):
            return await transport.backlog()
    except Exception as exc:
        log.warning("backlog not measured (%s)", describe(exc, 200))
        return None


class _Families(Collector):
    def __init__(self, families: Sequence[GaugeMetricFamily]) -> None:
        self.families = families

    def collect(self) -> Iterable[GaugeMetricFamily]:
        return self.families


def families(backlog: Sequence[Backlog] | None) -> list[GaugeMetricFamily]:
    """The two gauges; without a measurement they are declared with no samples (absent
    series, not a false zero)."""
    records = GaugeMetricFamily(
        RECORDS, "Records waiting in the pipeline's queue, by kind (bus record or topic)",
        labels=["kind"],
    )  # fmt: skip
    oldest = GaugeMetricFamily(
        OLDEST, "Age of the oldest record waiting in the pipeline's queue, by kind",
        labels=["kind"],
    )  # fmt: skip
    for item in backlog or ():
        records.add_metric([item.kind], item.records)
        oldest.add_metric([item.kind], item.oldest_seconds)
    return [records, oldest]


def render(backlog: Sequence[Backlog] | None) -> bytes:
    """The families in Prometheus text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families(backlog)))
    return generate_latest(registry)
