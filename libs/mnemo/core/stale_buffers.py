"""Runs that wait in a buffer whose step the group no longer has (the group was changed
while they waited): both transports give them up the same way, on the tick that finds it.

The held runs fail with an error naming the step and saying a retry sends them through
the current pipeline; their items are dropped. The other buffers keep working.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.failures import describe
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import BufferStep, MissingStep
from mnemo.store import runs


def current_buffer(group: GroupConfig, step_id: str) -> BufferStep:
    """The group's buffer step `step_id` as the group stands now. Raises MissingStep
    (naming the step and the group) when it is gone or is no longer a buffer."""
    step = group.step(step_id)  # MissingStep when gone
    if not isinstance(step, BufferStep):
        raise MissingStep(
            f"step '{step.id}' of group '{group.name}' is no longer a buffer (the group "
            "was changed while runs waited in it); retry the run to send it through the "
            "current pipeline"
        )
    return step


async def fail_held_runs(
    conn: AsyncConnection, run_ids: Collection[str], reason: Exception, now: datetime
) -> None:
    """Fail the open runs a given-up buffer held, with `reason` as their error."""
    await runs.set_status(conn, sorted(set(run_ids)), RunState.failed, now, error=describe(reason))
