import asyncio

import pytest

from mnemo.core.ttl_cache import TTLCache


class Loader:
    def __init__(self) -> None:
        self.calls = 0
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail = False

    async def __call__(self) -> str:
        self.calls += 1
        await self.gate.wait()
        if self.fail:
            raise LookupError("not there")
        return f"value {self.calls}"


async def test_values_are_reused_until_they_expire() -> None:
    now = [0.0]
    cache: TTLCache[str, str] = TTLCache(5.0, clock=lambda: now[0])
    load = Loader()
    assert await cache.get("k", load) == "value 1"
    now[0] = 4.9
    assert await cache.get("k", load) == "value 1"
    now[0] = 5.0
    assert await cache.get("k", load) == "value 2"


async def test_concurrent_misses_share_one_load() -> None:
    cache: TTLCache[str, str] = TTLCache(5.0)
    load = Loader()
    load.gate.clear()
    waiting = [asyncio.create_task(cache.get("k", load)) for _ in range(10)]
    await asyncio.sleep(0)
    load.gate.set()
    assert set(await asyncio.gather(*waiting)) == {"value 1"}
    assert load.calls == 1


async def test_failures_reach_every_waiter_and_are_not_cached() -> None:
    cache: TTLCache[str, str] = TTLCache(5.0)
    load = Loader()
    load.fail = True
    load.gate.clear()
    waiting = [asyncio.create_task(cache.get("k", load)) for _ in range(3)]
    await asyncio.sleep(0)
    load.gate.set()
    outcomes = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(o, LookupError) for o in outcomes) and load.calls == 1
    load.fail = False
    assert await cache.get("k", load) == "value 2"


async def test_when_the_loading_caller_is_cancelled_a_waiter_loads_instead() -> None:
    cache: TTLCache[str, str] = TTLCache(5.0)
    load = Loader()
    load.gate.clear()
    first = asyncio.create_task(cache.get("k", load))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.get("k", load))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    load.gate.set()
    assert await second == "value 2"
    assert await cache.get("k", load) == "value 2" and load.calls == 2


async def test_put_and_clear() -> None:
    cache: TTLCache[str, str] = TTLCache(5.0, max_entries=2)
    load = Loader()
    cache.put("a", "x")
    assert await cache.get("a", load) == "x" and load.calls == 0
    cache.put("b", "y")
    cache.put("c", "z")  # over the bound: the old entries go
    assert await cache.get("a", load) == "value 1"
    cache.clear()
    assert await cache.get("c", load) == "value 2"
