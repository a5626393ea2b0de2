"""Re-driving a failed run from its kept raw input, in either mode.

The run goes through its group's current pipeline: from the step it started at if that
step is still there, else from the current entry step for its input type (the group was
changed since, and the step renamed or removed).

The run is claimed with one conditional update (failed -> running), so of two concurrent
retries exactly one proceeds and the other gets 409. If the transport does not take the
run, it is failed again with its original error and a note, and the caller gets 503: a
retry never leaves a run `running` with nothing in flight.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import cast

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.clock import Clock
from mnemo.core.failures import describe
from mnemo.core.groups import GroupCache
from mnemo.core.records import RunRecord
from mnemo.core.transport import RunTransport, TransportUnavailable
from mnemo.domain.inputs import InputType
from mnemo.domain.memory import Run, RunState
from mnemo.domain.requests import InvalidRequest, Refusal
from mnemo.store import runs
from mnemo.tracing import spans

log = logging.getLogger(__name__)
Claimed = tuple[RunRecord, str | None]  # the run's record and the error it had failed with


@dataclass(frozen=True)
class RunRetry:
    db: AsyncEngine
    transport: RunTransport
    clock: Clock
    # The run as the caller may see it; raises NotFound (404) for one that does not exist.
    get_run: Callable[[str, str], Awaitable[Run]]
    groups: GroupCache

    async def __call__(self, project: str, run_id: str) -> Run:
        """The retried run (running). 409 if it cannot be retried, 503 if the transport
        did not take it. The retry starts a new trace (`mnemo.retry`)."""
        attributes = {"mnemo.project": project, "mnemo.run_id": run_id}
        with spans.span("mnemo.retry", attributes):
            return await self._retry(project, run_id)

    async def _retry(self, project: str, run_id: str) -> Run:
        claimed: Claimed | None = None
        try:
            async with self.db.begin() as tx:
                found = await runs.claim_failed(tx, project, run_id, self.clock.now())
                if found is not None:
                    record = replace(RunRecord.from_row(found[0]), trace=spans.carrier())
                    record = await self._current_start(tx, record)
                    claimed = (record, found[1])
                    await self.transport.stage(tx, claimed[0])
        except InvalidRequest:
            raise  # refused before anything was claimed: the transaction rolled back
        except Exception as exc:
            if claimed is not None:  # the claim rolled back: the run is still failed
                await self._fail_again(claimed, exc, committed=False)
            raise TransportUnavailable(f"run '{run_id}' was not retried: {describe(exc)}") from exc
        if claimed is None:
            run = await self.get_run(project, run_id)
            raise InvalidRequest(_not_retried(run), kind=Refusal.conflict)
        try:
            await self.transport.publish(claimed[0])
        except Exception as exc:
            if await self._fail_again(claimed, exc, committed=True):
                raise TransportUnavailable(
                    f"run '{run_id}' was not retried: {describe(exc)}"
                ) from exc
            log.info("run %s: the retry reached the pipeline after all", run_id)
        return claimed[0].to_run()

    async def _current_start(self, tx: AsyncConnection, record: RunRecord) -> RunRecord:
        """`record`, starting where the group's current pipeline starts it."""
        group = await self.groups.get(record.project, record.group)
        pipeline = group.pipeline
        if any(step.id == record.starting_step_id for step in pipeline.steps):
            return record
        try:
            entry = pipeline.entry_for(cast(InputType, record.input_type))
        except LookupError as exc:
            message = (
                f"run '{record.run_id}' cannot be retried: step '{record.starting_step_id}' "
                f"is no longer in group '{record.group}', and {exc}"
            )
            raise InvalidRequest(message, kind=Refusal.conflict) from exc
        index = pipeline.index_of(entry.id)
        await runs.set_starting_step(tx, record.run_id, index, entry.id)
        return replace(record, starting_step=index, starting_step_id=entry.id)

    async def _fail_again(self, claimed: Claimed, exc: Exception, committed: bool) -> bool:
        """Fail the run again with a note. False: the pipeline took the retry meanwhile."""
        record, previous_error = claimed
        try:
            async with self.db.begin() as tx:
                return await runs.fail_retry(
                    tx, record.run_id, committed, previous_error, describe(exc, 500),
                    self.clock.now(),
                )  # fmt: skip
        except Exception as note_exc:  # the database is down too: the claim never committed
            log.warning("run %s: retry failure not recorded (%s)", record.run_id, note_exc)
            return True


def _not_retried(run: Run) -> str:
    """Why a run that exists was not claimed for a retry."""
    if run.status != RunState.failed:
        return f"run '{run.run_id}' is {run.status.value}; only failed runs retry"
    if run.erased:
        return f"run '{run.run_id}' was erased with its user's data; there is nothing to retry"
    return (
        f"run '{run.run_id}' no longer has its raw input (dropped by its group's "
        "retention); there is nothing to retry"
    )
