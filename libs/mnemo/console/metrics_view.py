"""Reading the Prometheus exposition the gateway serves: samples, windows and quantiles.

The health page keeps a few minutes of snapshots (taken when it is viewed) so that counters
become rates and histograms become recent percentiles, as PromQL's rate() and
histogram_quantile() would compute them.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

Labels = tuple[tuple[str, str], ...]
SampleKey = tuple[str, Labels]


@dataclass(frozen=True)
class Family:
    name: str
    type: str
    help: str
    samples: tuple[tuple[str, Labels, float], ...]


@dataclass(frozen=True)
class Snapshot:
    at: float
    values: dict[SampleKey, float]
    families: tuple[Family, ...] = ()

    @classmethod
    def parse(cls, text: str, at: float | None = None) -> Snapshot:
        families = []
        values: dict[SampleKey, float] = {}
        for fam in text_string_to_metric_families(text):
            samples = []
            for s in fam.samples:
                if s.name.endswith("_created"):  # creation timestamps, not measurements
                    continue
                labels = tuple(sorted(s.labels.items()))
                samples.append((s.name, labels, float(s.value)))
                values[(s.name, labels)] = float(s.value)
            families.append(Family(fam.name, fam.type, fam.documentation, tuple(samples)))
        return cls(time.time() if at is None else at, values, tuple(families))

    def select(
        self, name: str, where: Callable[[dict[str, str]], bool] | None = None
    ) -> Iterable[tuple[dict[str, str], float]]:
        for (sample, labels), value in self.values.items():
            if sample == name:
                as_dict = dict(labels)
                if where is None or where(as_dict):
                    yield as_dict, value

    def has(self, name: str) -> bool:
        return any(True for _ in self.select(name))


@dataclass(frozen=True)
class Window:
    """The change between a baseline snapshot and now. Without a baseline, everything since
    the process started (counters start at zero) and no rates."""

    now: Snapshot
    base: Snapshot | None

    @property
    def seconds(self) -> float | None:
        return self.now.at - self.base.at if self.base else None

    def grouped(self, name: str, by: tuple[str, ...]) -> dict[tuple[str, ...], float]:
        """Sum of the counter's increase, grouped by the label values of `by`."""
        out: dict[tuple[str, ...], float] = {}
        for labels, value in self.now.select(name):
            key = tuple(labels.get(b, "") for b in by)
            before = (
                self.base.values.get((name, tuple(sorted(labels.items()))), 0.0)
                if self.base
                else 0.0
            )
            # A counter that went down was reset (the process restarted): count from zero.
            out[key] = out.get(key, 0.0) + (value - before if value >= before else value)
        return out

    def increase(self, name: str, **match: str) -> float:
        return sum(
            v for k, v in self.grouped(name, tuple(match)).items() if k == tuple(match.values())
        )

    def rate(self, increase: float) -> float | None:
        seconds = self.seconds
        return increase / seconds if seconds else None

    def quantile(self, histogram: str, q: float, **match: str) -> float | None:
        """histogram_quantile() over the window's bucket increases; None without samples."""
        buckets: dict[float, float] = {}
        for key, value in self.grouped(f"{histogram}_bucket", ("le", *match)).items():
            if key[1:] == tuple(match.values()):
                le = math.inf if key[0] == "+Inf" else float(key[0])
                buckets[le] = buckets.get(le, 0.0) + value
        return bucket_quantile(q, sorted(buckets.items()))

    def mean(self, histogram: str, **match: str) -> float | None:
        count = self.increase(f"{histogram}_count", **match)
        return self.increase(f"{histogram}_sum", **match) / count if count else None


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """Linear interpolation inside the bucket holding the q-th observation (cumulative
    counts, ascending bounds, the last one +Inf), like Prometheus."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return lower_bound  # above the largest finite bucket: its bound is all we know
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (
                count - lower_count
            )
        lower_bound, lower_count = bound, count
    return lower_bound


@dataclass
class MetricsHistory:
    """Recent snapshots of one gateway process (thread-safe; bounded in age and count)."""

    min_spacing: float = 2.0
    max_age: float = 600.0
    _snapshots: deque[Snapshot] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, snapshot: Snapshot) -> None:
        with self._lock:
            if self._snapshots and snapshot.at - self._snapshots[-1].at < self.min_spacing:
                return
            self._snapshots.append(snapshot)
            while self._snapshots and snapshot.at - self._snapshots[0].at > self.max_age:
                self._snapshots.popleft()

    def window(self, now: Snapshot, seconds: float) -> Window:
        """`now` against the oldest snapshot at most `seconds` old (at least 1 s old)."""
        with self._lock:
            candidates = [s for s in self._snapshots if 1.0 <= now.at - s.at <= seconds]
        return Window(now, candidates[0] if candidates else None)

    def series(self, now: Snapshot, value: Callable[[Window], float | None]) -> list[float]:
        """`value` between consecutive snapshots, oldest first, ending at `now`."""
        with self._lock:
            points = [*self._snapshots]
        if not points or points[-1].at < now.at:
            points.append(now)
        out = []
        for before, after in itertools.pairwise(points):
            measured = value(Window(after, before))
            out.append(measured if measured is not None else 0.0)
        return out

    def points(
        self, now: Snapshot, value: Callable[[Window], float | None]
    ) -> list[tuple[float, float]]:
        """`series` with the time (epoch seconds) each value was measured at; gaps left out."""
        with self._lock:
            snapshots = [*self._snapshots]
        if not snapshots or snapshots[-1].at < now.at:
            snapshots.append(now)
        out = []
        for before, after in itertools.pairwise(snapshots):
            measured = value(Window(after, before))
            if measured is not None:
                out.append((after.at, measured))
        return out

    def trailing(
        self, now: Snapshot, value: Callable[[Window], float | None], seconds: float = 60.0
    ) -> list[tuple[float, float]]:
        """At each snapshot, `value` over the window reaching back `seconds` (from the oldest
        snapshot inside it), like PromQL's `increase(x[1m])` at each sample; the first
        snapshot has no window and no point."""
        with self._lock:
            snapshots = [*self._snapshots]
        if not snapshots or snapshots[-1].at < now.at:
            snapshots.append(now)
        out = []
        start = 0
        for after in snapshots[1:]:
            while after.at - snapshots[start].at > seconds:
                start += 1
            base = snapshots[start]
            if base is after:
                continue
            measured = value(Window(after, base))
            if measured is not None:
                out.append((after.at, measured))
        return out

    def gauge(self, now: Snapshot, key: SampleKey) -> list[tuple[float, float]]:
        """A gauge's value at each snapshot that has it, oldest first."""
        with self._lock:
            snapshots = [*self._snapshots]
        if not snapshots or snapshots[-1].at < now.at:
            snapshots.append(now)
        return [(s.at, s.values[key]) for s in snapshots if key in s.values]
