"""The one Prometheus exposition: `/metrics` serves it and the console's health page reads it,
so both always show the same series.

Under `mnemo serve` every process (the gateway and its worker processes) writes its samples
to the multiprocess folder (`mnemo.telemetry.multiprocess`) and they are merged here;
otherwise this process's registry is the exposition. The backlog family is measured from the
queue at each call (`mnemo.telemetry.backlog`).
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from mnemo.core.engine import Engine
from mnemo.telemetry import backlog, multiprocess


def process_metrics() -> bytes:
    """The pipeline's series: merged from every process, or this process's own."""
    if not multiprocess.enabled():
        return generate_latest(REGISTRY)
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry(auto_describe=False)
    MultiProcessCollector(registry)
    return generate_latest(registry)


async def exposition(engine: Engine) -> bytes:
    """The text Prometheus scrapes from this gateway."""
    measured = await backlog.measure(engine.transport)
    return process_metrics() + backlog.render(measured)
