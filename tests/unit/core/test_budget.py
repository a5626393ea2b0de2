import asyncio

import pytest

from mnemo.core.budget import RunTimeBudgetExceeded, time_budget


async def test_work_past_the_budget_is_cancelled_and_named() -> None:
    cancelled = False

    async def slow() -> None:
        nonlocal cancelled
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled = True
            raise

    with pytest.raises(RunTimeBudgetExceeded, match=r"time budget of 0\.05 s") as raised:
        async with time_budget(0.05):
            await slow()
    assert cancelled and raised.value.seconds == 0.05


async def test_a_timeout_of_the_work_itself_is_not_the_budget() -> None:
    with pytest.raises(TimeoutError) as raised:
        async with time_budget(30):
            raise TimeoutError("the LLM timed out")
    assert not isinstance(raised.value, RunTimeBudgetExceeded)


async def test_work_within_the_budget_is_untouched() -> None:
    async with time_budget(30):
        await asyncio.sleep(0)
