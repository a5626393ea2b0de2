"""Consumer lag that cannot be read is reported stale, with its age (issue 39: during a
broker outage the lag gauge stayed frozen and looked current). The monitor reads a
broker that does not exist here; tests/kafka/test_lag.py reads a real one."""

from __future__ import annotations

import asyncio

from prometheus_client import REGISTRY

from mnemo.core.readiness import readiness
from mnemo.kafka.lag import LagMonitor


def gauge(name: str) -> float | None:
    return REGISTRY.get_sample_value(name)


async def test_a_lag_reading_that_fails_is_flagged_stale_with_its_age() -> None:
    monitor = LagMonitor("127.0.0.1:1", {"g": ["t"]})  # nothing listens on port 1
    assert monitor.stale() is None  # nothing read yet, nothing failed yet
    task = asyncio.create_task(monitor.run(0.05))
    try:
        for _ in range(400):
            if monitor.failure is not None and gauge("mnemo_kafka_consumer_lag_stale") == 1:
                break
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await monitor.close()
    assert gauge("mnemo_kafka_consumer_lag_stale") == 1
    assert gauge("mnemo_kafka_consumer_lag_age_seconds") == -1  # never read
    stale = monitor.stale()
    assert stale is not None and stale.startswith("consumer lag is stale (never read): ")
    monitor.measured_at = monitor.measured_at or 0.0  # as if read once, long ago
    assert "last read" in (monitor.stale() or "")


class Transport:
    """Readiness's view of a Kafka transport whose lag reading fails."""

    worker_roles: tuple[str, ...] = ()
    broker = "kafka k:9092"

    async def check(self) -> str | None:
        return None

    def lag_problem(self) -> str | None:
        return "consumer lag is stale (last read 40 s ago): KafkaConnectionError"


class FailingDb:
    def connect(self) -> None:
        raise OSError("no database in this test")


async def test_readiness_names_stale_lag_without_making_the_gateway_unready() -> None:
    report = await readiness(FailingDb(), Transport(), 20.0, None)  # type: ignore[arg-type]
    lag = next(c for c in report.checks if c.name == "consumer_lag")
    assert not lag.ok and lag.advisory
    assert lag.detail == "consumer lag is stale (last read 40 s ago): KafkaConnectionError"
