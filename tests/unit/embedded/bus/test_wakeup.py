import asyncio

from mnemo.embedded.bus.wakeup import Wakeup


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def _parked(wakeup: Wakeup, count: int, timeout: float = 5) -> list[asyncio.Task[bool]]:
    tasks = [asyncio.create_task(wakeup.wait(timeout)) for _ in range(count)]
    await _settle()
    return tasks


async def test_wake_releases_exactly_as_many_as_asked() -> None:
    wakeup = Wakeup()
    tasks = await _parked(wakeup, 5)
    wakeup.wake(2)
    await _settle()
    assert sum(t.done() for t in tasks) == 2
    wakeup.wake_all()
    assert await asyncio.gather(*tasks) == [True] * 5


async def test_oldest_parked_consumer_is_woken_first() -> None:
    wakeup = Wakeup()
    first, second = await _parked(wakeup, 2)
    wakeup.wake()
    await _settle()
    assert first.done() and not second.done()
    second.cancel()


async def test_a_wake_with_nobody_parked_is_not_lost() -> None:
    wakeup = Wakeup()
    wakeup.wake()
    assert await asyncio.wait_for(wakeup.wait(60), 1) is True
    assert await wakeup.wait(0.01) is False  # kept once, not forever


async def test_timeout_returns_false_and_leaves_no_waiter_behind() -> None:
    wakeup = Wakeup()
    assert await wakeup.wait(0.01) is False
    (task,) = await _parked(wakeup, 1)
    wakeup.wake()  # goes to the live waiter, not the timed-out one
    assert await task is True


async def test_a_cancelled_waiter_does_not_swallow_a_wake() -> None:
    wakeup = Wakeup()
    gone, kept = await _parked(wakeup, 2)
    gone.cancel()
    await _settle()
    wakeup.wake()
    assert await asyncio.wait_for(kept, 1) is True
