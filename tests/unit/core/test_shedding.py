"""The per-project add rate: a token bucket per project, refusing with 429 and Retry-After."""

from __future__ import annotations

import pytest

from mnemo.core.shedding import MAX_BUCKETS, Shedder
from mnemo.domain.requests import InvalidRequest
from mnemo.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def shedder(clock: Clock, rate: float, burst: int) -> Shedder:
    settings = Settings(
        project_adds_per_second=rate,
        project_add_burst=burst,
        max_open_runs=0,
        project_max_open_runs=0,
    )  # no quota: no database needed
    return Shedder(settings, db=None, clock=clock)  # type: ignore[arg-type]


async def test_a_burst_passes_then_the_rate_holds_with_a_retry_after() -> None:
    clock = Clock()
    shed = shedder(clock, rate=2, burst=3)
    for _ in range(3):
        await shed.admit("p")
    with pytest.raises(InvalidRequest) as refused:
        await shed.admit("p")
    assert refused.value.kind == "overloaded" and refused.value.retry_after == 1
    assert "MNEMO_PROJECT_ADDS_PER_SECOND" in refused.value.detail
    await shed.admit("other")  # other projects have their own bucket
    clock.now += 0.5  # one token back at 2 per second
    await shed.admit("p")
    with pytest.raises(InvalidRequest):
        await shed.admit("p")


async def test_a_slow_rate_says_how_long_to_wait() -> None:
    clock = Clock()
    shed = shedder(clock, rate=0.1, burst=1)
    await shed.admit("p")
    with pytest.raises(InvalidRequest) as refused:
        await shed.admit("p")
    assert refused.value.retry_after == 10


async def test_no_rate_means_no_limit_and_buckets_stay_bounded() -> None:
    clock = Clock()
    unlimited = shedder(clock, rate=0, burst=1)
    for _ in range(1000):
        await unlimited.admit("p")
    limited = shedder(clock, rate=1, burst=1)
    for i in range(MAX_BUCKETS + 10):
        await limited.admit(f"project-{i}")
        clock.now += 1.0  # each bucket has refilled by the next project's add
    assert len(limited._buckets) <= MAX_BUCKETS


class CountedShedder(Shedder):
    """The open-run counts from a dict instead of the database."""

    def __init__(self, settings: Settings, open_runs: dict[str, int]) -> None:
        super().__init__(settings, db=None, clock=Clock())  # type: ignore[arg-type]
        self.open_runs = open_runs

    async def _read_counts(self) -> dict[str, int]:
        self._admitted = {}
        return dict(self.open_runs)


async def test_the_add_rate_is_on_by_default_far_above_an_agent() -> None:
    defaults = Settings()
    assert defaults.project_adds_per_second >= 10  # an agent adds a few times a minute
    shed = shedder(Clock(), defaults.project_adds_per_second, defaults.project_add_burst)
    for _ in range(defaults.project_add_burst):
        await shed.admit("p")
    with pytest.raises(InvalidRequest) as refused:
        await shed.admit("p")
    assert refused.value.kind == "overloaded"


async def test_the_open_run_quota_is_on_by_default() -> None:
    defaults = Settings()
    quota = defaults.project_max_open_runs
    assert 100 <= quota < defaults.max_open_runs  # no single project fills the server
    shed = CountedShedder(defaults, {"p": quota - 1, "other": 5})
    await shed.admit("p")  # the last one under the quota
    with pytest.raises(InvalidRequest) as refused:
        await shed.admit("p")
    assert refused.value.kind == "overloaded"
    assert "MNEMO_PROJECT_MAX_OPEN_RUNS" in refused.value.detail
    await shed.admit("other")
