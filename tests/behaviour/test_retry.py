"""Retry of a failed run: it runs again from its kept input; of two concurrent retries
exactly one runs, the other is refused (409)."""

from __future__ import annotations

import asyncio

from mnemo.domain.memory import Run
from mnemo.domain.requests import InvalidRequest
from tests.behaviour.conftest import ATTEMPTS, Mode
from tests.behaviour.helpers import add, completed, contents, finished
from tests.behaviour.test_drafts import RECONCILED


async def failed_run(mode: Mode, project: str, text: str) -> Run:
    await mode.engine.put_group(project, "r", RECONCILED)
    mode.llm.fail("extract", status=500, times=ATTEMPTS)
    run = await add(mode, project, "r", "u", {"string": {"content": [text]}})
    failed = await finished(mode, project, run.run_id)
    assert failed.status.value == "failed" and failed.error and "500" in failed.error, failed
    return failed


async def test_a_failed_run_runs_again_on_retry(mode: Mode, project: str) -> None:
    failed = await failed_run(mode, project, "retry me")
    retried = await mode.engine.retry_run(project, failed.run_id)
    assert retried.status.value == "running"
    await completed(mode, project, failed.run_id)
    assert await contents(mode, project, "r", "u") == ["User said: retry me"]


async def test_of_two_concurrent_retries_exactly_one_runs(mode: Mode, project: str) -> None:
    failed = await failed_run(mode, project, "only once")
    outcomes = await asyncio.gather(
        *(mode.engine.retry_run(project, failed.run_id) for _ in range(2)),
        return_exceptions=True,
    )
    started = [o for o in outcomes if isinstance(o, Run)]
    refused = [o for o in outcomes if isinstance(o, InvalidRequest)]
    assert len(started) == 1 and len(refused) == 1, outcomes
    assert refused[0].kind == "conflict"
    [done] = await completed(mode, project, failed.run_id)
    assert done.committed_operations is not None
    assert len(done.committed_operations.created) == 1
    assert await contents(mode, project, "r", "u") == ["User said: only once"]
