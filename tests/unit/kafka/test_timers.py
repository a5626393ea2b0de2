"""Stage timers outlive outages (mnemo.kafka.timers): a failing body is logged, skipped for
a doubling backoff, and resumes on the first success; faust never sees the exception."""

from __future__ import annotations

import psycopg
import pytest

from mnemo.kafka.timers import Guarded, guarded


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


async def test_a_failing_timer_backs_off_and_resumes() -> None:
    clock, calls = Clock(), []
    down = True

    async def body() -> None:
        calls.append(clock.t)
        if down:
            raise psycopg.OperationalError("connection refused")

    timer = Guarded("committer: consolidation timer", body, initial=1.0, cap=4.0, now=clock)
    for t in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.9, 7.0, 10.9, 11.0):
        clock.t = t
        await timer()  # never raises
    # Tries at 0 (wait 1), 1 (wait 2), 3 (wait 4), 7 (wait 4, the cap), 11.
    assert calls == [0.0, 1.0, 3.0, 7.0, 11.0]
    assert timer.failures == 5
    down = False
    clock.t = 15.0
    await timer()
    assert timer.failures == 0
    clock.t = 15.1
    await timer()  # the backoff was reset: every tick runs again
    assert calls[-2:] == [15.0, 15.1]


async def test_cancellation_still_ends_the_timer() -> None:
    import asyncio

    async def body() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await Guarded("t", body)()


async def test_the_decorator_keeps_the_name_faust_gives_the_timer() -> None:
    @guarded("committer: consolidation timer")
    async def consolidation_tick() -> None:
        raise psycopg.OperationalError("the database system is shutting down")

    assert consolidation_tick.__name__ == "consolidation_tick"
    await consolidation_tick()  # the outage is logged, not raised


def test_every_stage_timer_is_guarded() -> None:
    """The committer's consolidation timer crashed the service in a Postgres outage (issue
    39): every timer and task a stage app declares must be a guarded body."""
    from mnemo.settings import Settings
    from services.buffer.app import create_app as buffer
    from services.committer.app import create_app as committer

    settings = Settings(database_url="postgresql://nobody@127.0.0.1:1/none")
    for create in (committer, buffer):
        stage = create(settings)
        tasks = list(stage.app._app_tasks)
        assert tasks, "the app declares no timers"
        for task in tasks:
            inner = getattr(task, "__wrapped__", task)
            assert hasattr(inner, "guard"), f"{inner!r} is not guarded"
