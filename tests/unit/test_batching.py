import asyncio

import pytest

from mnemo.batching import MicroBatcher, QueueFull


class RecordingEncoder:
    """Doubles its inputs; remembers each call's items; can be held open or made to fail."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []
        self.release = asyncio.Event()
        self.release.set()
        self.fail_on: int | None = None

    async def __call__(self, items: list[int]) -> list[int]:
        self.calls.append(list(items))
        await self.release.wait()
        if self.fail_on is not None and self.fail_on in items:
            raise ValueError(f"cannot encode {self.fail_on}")
        return [2 * i for i in items]


async def test_results_come_back_in_order_per_request() -> None:
    encoder = RecordingEncoder()
    batcher = MicroBatcher(encoder, max_batch=8)
    assert await batcher.run([3, 1, 2]) == [6, 2, 4]


async def test_requests_waiting_together_share_one_call() -> None:
    encoder = RecordingEncoder()
    encoder.release.clear()
    batcher = MicroBatcher(encoder, max_batch=64)
    first = asyncio.create_task(batcher.run([1]))
    await asyncio.sleep(0)  # the first call starts and is held open
    others = [asyncio.create_task(batcher.run([i, i + 100])) for i in range(2, 12)]
    await asyncio.sleep(0)
    encoder.release.set()
    assert await first == [2]
    assert [await t for t in others] == [[2 * i, 2 * (i + 100)] for i in range(2, 12)]
    assert len(encoder.calls) == 2  # the held call, then everything that queued behind it
    assert len(encoder.calls[1]) == 20


async def test_batches_never_exceed_max_batch() -> None:
    encoder = RecordingEncoder()
    batcher = MicroBatcher(encoder, max_batch=4)
    assert await batcher.run(list(range(10))) == [2 * i for i in range(10)]
    assert [len(c) for c in encoder.calls] == [4, 4, 2]


async def test_a_failing_call_fails_only_its_requests() -> None:
    encoder = RecordingEncoder()
    encoder.release.clear()
    encoder.fail_on = 7
    batcher = MicroBatcher(encoder, max_batch=1)
    doomed = asyncio.create_task(batcher.run([7]))
    fine = asyncio.create_task(batcher.run([5]))
    await asyncio.sleep(0)
    encoder.release.set()
    with pytest.raises(ValueError, match="cannot encode 7"):
        await doomed
    assert await fine == [10]


async def test_a_wrong_result_count_is_an_error_not_a_hang() -> None:
    async def short(items: list[int]) -> list[int]:
        return items[:-1]

    batcher = MicroBatcher(short, max_batch=8)
    with pytest.raises(RuntimeError, match="2 results for 3"):
        await asyncio.wait_for(batcher.run([1, 2, 3]), 5)


async def test_a_cancelled_request_is_skipped_and_the_rest_still_served() -> None:
    encoder = RecordingEncoder()
    encoder.release.clear()
    batcher = MicroBatcher(encoder, max_batch=64)
    held = asyncio.create_task(batcher.run([1]))
    await asyncio.sleep(0)
    gone = asyncio.create_task(batcher.run([2]))
    kept = asyncio.create_task(batcher.run([3]))
    await asyncio.sleep(0)
    gone.cancel()
    encoder.release.set()
    assert await held == [2]
    assert await kept == [6]
    assert encoder.calls == [[1], [3]]


async def test_a_small_request_is_not_held_behind_a_large_one() -> None:
    encoder = RecordingEncoder()
    encoder.release.clear()
    batcher = MicroBatcher(encoder, max_batch=4)
    large = asyncio.create_task(batcher.run(list(range(100, 120))))
    await asyncio.sleep(0)  # the first call (4 of the 20 items) starts and is held open
    small = asyncio.create_task(batcher.run([7]))
    await asyncio.sleep(0)
    encoder.release.set()
    assert await small == [14]
    assert await large == [2 * i for i in range(100, 120)]
    assert 7 in encoder.calls[1]  # the very next call, not after the large request's rest
    assert [len(c) for c in encoder.calls] == [4, 4, 4, 4, 4, 1]


async def test_a_full_queue_refuses_at_once_and_a_lone_request_always_fits() -> None:
    encoder = RecordingEncoder()
    encoder.release.clear()
    batcher = MicroBatcher(encoder, max_batch=2, max_pending=5)
    held = asyncio.create_task(batcher.run([1]))
    await asyncio.sleep(0)  # in the running call: no longer waiting
    waiting = asyncio.create_task(batcher.run([2, 3, 4, 5]))
    await asyncio.sleep(0)
    assert batcher.pending == 4
    with pytest.raises(QueueFull):
        await batcher.run([6, 7])
    also_fits = asyncio.create_task(batcher.run([8]))
    await asyncio.sleep(0)
    encoder.release.set()
    assert (await held, await waiting, await also_fits) == ([2], [4, 6, 8, 10], [16])
    assert batcher.pending == 0
    assert await batcher.run(list(range(20))) == [2 * i for i in range(20)]  # alone: taken
