"""Where the offline heuristics do their CPU work: a small thread pool, off the event loop.

Sentence rules and similarity decisions over a large add take real CPU time. On the worker's
event loop that time would stall every other scope's run (and the heartbeat); in a thread the
loop keeps serving them. The pool is small on purpose: numpy releases the GIL inside its
matrix products, but the regular-expression work does not, and a few threads are enough to
keep the cores busy without crowding the loop out of the GIL.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
THREADS = 2


class Offload:
    """`await offload(fn, *args)` runs `fn(*args)` in the pool and returns its result.

    Waiting calls queue in the pool, at most one per pipeline worker that called.
    """

    def __init__(self, threads: int = THREADS) -> None:
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="mnemo-offline")

    async def __call__(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        call = functools.partial(fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
