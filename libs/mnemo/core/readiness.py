"""Readiness: can this server take an add and will the pipeline run it?

Ready means: the database answers, the transport's broker answers (distributed mode), and
for every worker role the transport needs, some process of that role has a fresh heartbeat.
Where the server itself supervises worker processes (`mnemo serve`), what it knows about
its own children wins over their heartbeat rows: a worker it has just reaped is dead now,
whatever its last heartbeat says. The age of the oldest running run is reported, never
judged: a long pipeline is not an outage.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.core.failures import describe
from mnemo.core.transport import RunTransport
from mnemo.store import heartbeats, runs
from mnemo.store.heartbeats import Heartbeat

CHECK_SECONDS = 5.0
# How long a transient write failure of this process keeps it not ready (unless a write
# succeeds before): long enough for a load balancer to notice, short enough to come back
# on its own once the cause (a full disk) is gone.
WRITE_FAILURE_SECONDS = 30.0


@dataclass(frozen=True)
class Check:
    """One readiness check. An `advisory` check (the configured LLM and embedder) is
    reported when it fails but does not make the process unready: reads, the console and
    durable adds still work, and every replica shares the same endpoint, so taking them out
    of a load balancer would turn a misconfigured model into a full outage."""

    name: str
    ok: bool
    detail: str
    advisory: bool = False


@dataclass
class Readiness:
    checks: list[Check] = field(default_factory=list)
    workers: list[Heartbeat] = field(default_factory=list)
    oldest_running_run_age_seconds: float | None = None

    @property
    def ready(self) -> bool:
        return all(c.ok or c.advisory for c in self.checks)


class WriteHealth:
    """What this process's last writes said. A read-only check cannot see a full disk (reads
    still work), so adds report here: a transient failure makes /readyz not ready, naming
    it, until a write succeeds or WRITE_FAILURE_SECONDS pass."""

    def __init__(self, window_seconds: float = WRITE_FAILURE_SECONDS) -> None:
        self.window = window_seconds
        self._failure: tuple[float, str] | None = None

    def failed(self, exc: BaseException) -> None:
        self._failure = (time.monotonic(), describe(exc, 200))

    def succeeded(self) -> None:
        self._failure = None

    def check(self) -> Check | None:
        """A failing check while a recent write failed; None otherwise."""
        if self._failure is None:
            return None
        at, why = self._failure
        age = time.monotonic() - at
        if age >= self.window:
            return None
        return Check("database_writes", False, f"an add failed {age:.0f} s ago: {why}")


class LocalWorkers(Protocol):
    """Worker processes this server supervises (`mnemo serve`)."""

    def reap(self) -> None:
        """Notice children that died since the last look (non-blocking)."""

    def alive(self, host: str, pid: int) -> bool | None:
        """Whether that process is a live child; None when it is not one of ours."""

    def check(self) -> Check:
        """The supervisor's own verdict (e.g. every worker process dead or restarting)."""


async def readiness(
    db: AsyncEngine,
    transport: RunTransport,
    heartbeat_timeout: float,
    local: LocalWorkers | None,
    writes: WriteHealth | None = None,
) -> Readiness:
    """Check everything once; each part answers within CHECK_SECONDS."""
    report = Readiness()
    if local is not None:
        local.reap()
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            async with db.connect() as conn:
                report.workers = await heartbeats.fresh(conn, heartbeat_timeout)
                report.oldest_running_run_age_seconds = await runs.oldest_running_age(conn)
        report.checks.append(Check("database", True, "reachable"))
    except Exception as exc:
        report.checks.append(Check("database", False, f"unreachable ({describe(exc, 200)})"))
    failing_writes = writes.check() if writes is not None else None
    if failing_writes is not None:
        report.checks.append(failing_writes)
    problem = await transport.check()
    if problem is not None:
        report.checks.append(Check("broker", False, problem))
    elif transport.broker is not None:
        report.checks.append(Check("broker", True, f"{transport.broker} answers"))
    # Only the Kafka transport measures consumer lag; lag that cannot be read is said, not
    # judged (advisory): the broker check above already decides readiness.
    lag_problem = getattr(transport, "lag_problem", None)
    if lag_problem is not None and (stale := lag_problem()) is not None:
        report.checks.append(Check("consumer_lag", False, stale, advisory=True))
    if local is not None:
        report.workers = [w for w in report.workers if local.alive(w.host, w.pid) is not False]
        report.checks.append(local.check())
    if report.checks[0].ok:
        report.checks.append(_workers_check(report.workers, transport.worker_roles))
    return report


def _workers_check(workers: list[Heartbeat], roles: tuple[str, ...]) -> Check:
    missing = [r for r in roles if not any(w.role == r for w in workers)]
    if missing:
        return Check(
            "workers", False, f"no live heartbeat from: {', '.join(missing)} (none running)"
        )
    return Check("workers", True, f"{len(workers)} live worker process(es)")
