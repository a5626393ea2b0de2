"""Load shedding at admission: refuse an add early and say when to come back.

- A project over its add rate (a token bucket: MNEMO_PROJECT_ADDS_PER_SECOND, bursts of
  MNEMO_PROJECT_ADD_BURST) or its open-run quota (MNEMO_PROJECT_MAX_OPEN_RUNS runs
  `running` or `in_buffer`) gets 429 with Retry-After: that project should slow down.
- Past MNEMO_MAX_OPEN_RUNS open runs on the whole server, every add gets 503 with
  Retry-After: the pipeline's queue is full.
Open runs are counted in the database at most once a second (adds admitted since then are
added in), so a quota may be overshot by what one process admits within that second. The
rate is per gateway process.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.core.transport import TransportUnavailable
from mnemo.core.ttl_cache import TTLCache
from mnemo.domain.requests import InvalidRequest, Refusal
from mnemo.settings import Settings
from mnemo.store import runs

COUNT_SECONDS = 1.0
MAX_BUCKETS = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: float


class Shedder:
    def __init__(
        self, settings: Settings, db: AsyncEngine, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = settings.project_adds_per_second
        self.burst = float(settings.project_add_burst)
        self.project_max_open = settings.project_max_open_runs
        self.max_open = settings.max_open_runs
        self.db = db
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._counts: TTLCache[str, dict[str, int]] = TTLCache(COUNT_SECONDS, clock=clock)
        self._admitted: dict[str, int] = {}  # since the counts were read

    async def admit(self, project: str) -> None:
        """Raise InvalidRequest (429) or TransportUnavailable (503) if the add must wait."""
        if self.project_max_open or self.max_open:
            counts = await self._counts.get("open", self._read_counts)
            mine = counts.get(project, 0) + self._admitted.get(project, 0)
            if self.project_max_open and mine >= self.project_max_open:
                raise InvalidRequest(
                    f"project has {mine} open runs, its quota is {self.project_max_open} "
                    "(MNEMO_PROJECT_MAX_OPEN_RUNS); retry once some have finished",
                    kind=Refusal.overloaded,
                    retry_after=math.ceil(COUNT_SECONDS) + 1,
                )
            total = sum(counts.values()) + sum(self._admitted.values())
            if self.max_open and total >= self.max_open:
                raise TransportUnavailable(
                    f"the pipeline's queue is full ({total} open runs, MNEMO_MAX_OPEN_RUNS "
                    f"{self.max_open}); nothing was stored"
                )
        self._take(project)
        if self.project_max_open or self.max_open:
            self._admitted[project] = self._admitted.get(project, 0) + 1

    def _take(self, project: str) -> None:
        if not self.rate:
            return
        now = self.clock()
        bucket = self._buckets.get(project)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._forget_full(now)
            bucket = self._buckets[project] = _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens < 1:
            wait = math.ceil((1 - bucket.tokens) / self.rate)
            raise InvalidRequest(
                f"project is over its add rate of {self.rate:g}/s "
                f"(MNEMO_PROJECT_ADDS_PER_SECOND); retry in {wait} s",
                kind=Refusal.overloaded,
                retry_after=wait,
            )
        bucket.tokens -= 1

    def _forget_full(self, now: float) -> None:
        """Drop buckets that have refilled (their projects were idle): bounded, no loss."""
        full = [
            p for p, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate >= self.burst
        ]
        for project in full:
            del self._buckets[project]
        if len(self._buckets) >= MAX_BUCKETS:
            self._buckets.clear()

    async def _read_counts(self) -> dict[str, int]:
        async with self.db.connect() as conn:
            counts = await runs.open_counts(conn)
        self._admitted = {}
        return counts
