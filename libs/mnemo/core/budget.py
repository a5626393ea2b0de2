"""The time budget of a run's pass through its pipeline, the same in both modes.

A pass that outlives `MNEMO_RUN_TIME_BUDGET_SECONDS` (an LLM that answers very slowly, an
input far larger than usual) would hold its scope, and a worker, for as long as it lasts.
Instead it is cancelled and fails its runs with `RunTimeBudgetExceeded`, which is not
transient: the raw input is kept and `POST /v1/runs/{id}/retry` runs it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mnemo.errors import MnemoError


class RunTimeBudgetExceeded(MnemoError, RuntimeError):
    """A pass of runs through the pipeline took longer than the time budget."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the pipeline did not finish within the run time budget of {seconds:g} s "
            "(MNEMO_RUN_TIME_BUDGET_SECONDS); the raw input is kept: retry the run with "
            "POST /v1/runs/{run_id}/retry"
        )
        self.seconds = seconds


@asynccontextmanager
async def time_budget(seconds: float) -> AsyncIterator[None]:
    """Cancel the body after `seconds` and raise RunTimeBudgetExceeded; a TimeoutError
    raised by the body itself passes through unchanged."""
    timeout = asyncio.timeout(seconds)
    try:
        async with timeout:
            yield
    except TimeoutError as exc:
        if timeout.expired():
            raise RunTimeBudgetExceeded(seconds) from exc
        raise
