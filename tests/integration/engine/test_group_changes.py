"""A flush published just before its buffer step was renamed fails its runs naming the
step (never `coroutine raised StopIteration`). A race only the embedded worker pool can
stage step by step; the behaviour suite (tests/behaviour/test_group_changes.py) covers
runs waiting at a renamed or removed step on both transports."""

from __future__ import annotations

import pytest

from tests.behaviour.test_group_changes import renamed
from tests.integration.engine.helpers import add, says
from tests.integration.engine.test_buffers import Harness, buffered_group, harness

pytestmark = pytest.mark.integration
__all__ = ["harness"]


async def _failed_error(harness: Harness, project: str, run_id: str) -> str:
    run = await harness.engine.get_run(project, run_id)
    assert run.status.value == "failed", run
    assert run.error is not None
    return run.error


async def test_flush_whose_buffer_step_vanished_fails_naming_it(
    harness: Harness, project: str
) -> None:
    document = buffered_group({"triggers": {"count": 2}})
    await harness.engine.put_group(project, "notes", document)
    first = await add(
        harness.engine, project, {"group": "notes", "user_id": "u", "input": says("a")}
    )
    await harness.drain()
    assert await harness.status(project, first.run_id) == "in_buffer"
    second = await add(
        harness.engine, project, {"group": "notes", "user_id": "u", "input": says("b")}
    )
    # The second run fills the buffer: its flush is published, then the group changes
    # before a worker takes the flush.
    await harness.pool.run_once()
    await harness.engine.put_group(project, "notes", renamed(document, "hold", "hold_v2"))
    await harness.drain()
    for run in (first, second):
        error = await _failed_error(harness, project, run.run_id)
        assert "StopIteration" not in error and "'hold'" in error
