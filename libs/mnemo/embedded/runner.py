"""Drive one bus record through its pipeline steps inside the record's transaction.

Everything a record changes (buffer items, commits, the next record, run status) is written
in the transaction that also acknowledges it, so a crash replays the record from scratch and
nothing is applied twice. The rules (dispatch, triggers, windows) are the core's; this module
only keeps their state in Postgres and publishes on the embedded bus.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo import metrics
from mnemo.core.dispatch import LLM_KINDS, run_chain, takes_raw_input
from mnemo.core.flush_ids import flush_id
from mnemo.core.groups import GroupCache
from mnemo.core.records import RunRecord
from mnemo.core.withdrawal import withdraw_erased
from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, RunState
from mnemo.domain.pipeline import BufferStep, CommitStep, Step
from mnemo.domain.retention import Redaction
from mnemo.embedded.bus.base import CONSOLIDATE, FLUSH, PIPELINE_CHANNEL, RUN, Bus, Record
from mnemo.embedded.consolidation import check_payload, consolidate
from mnemo.steps.buffering import (
    Held,
    WindowEntry,
    advance,
    flush_batch,
    flush_before,
    flush_reason,
    items_of,
    slide,
)
from mnemo.steps.commit import commit
from mnemo.steps.extract import pre_extracted_candidates
from mnemo.store import buffers, erasure, runs, tombstones
from mnemo.tracing import spans
from mnemo.tracing.pipeline import record_span, step_span, unique_traces

log = logging.getLogger(__name__)


class PipelineRunner:
    def __init__(self, deps: Deps, bus: Bus, groups: GroupCache) -> None:
        self.deps = deps
        self.bus = bus
        self.groups = groups

    async def handle(self, tx: AsyncConnection, record: Record) -> None:
        """Run one bus record, in the trace of the run(s) it carries."""
        p = record.payload
        traces = [p["trace"]] if p.get("trace") else list(p.get("traces") or [])
        attributes = {"mnemo.record.kind": p.get("kind"), "mnemo.embedded.bus.record_id": record.id}
        with record_span(f"mnemo.process {p.get('kind')}", traces, attributes):
            await self._handle(tx, record)

    async def _handle(self, tx: AsyncConnection, record: Record) -> None:
        kind = record.payload["kind"]
        metrics.RECORDS_IN.labels(service="worker", channel=kind).inc()
        if kind == CONSOLIDATE:
            await consolidate(self.deps, self.groups, tx, record.payload)
            return
        if kind == RUN:
            started = await self._start_run(tx, record)
        elif kind == FLUSH:
            started = await self._start_flush(record)
        else:
            raise ValueError(f"unknown record kind {kind!r}")
        if started is not None:  # None: the run's user was erased meanwhile
            batch, group, step = started
            await self.execute(tx, group, step, batch)

    async def _start_run(
        self, tx: AsyncConnection, record: Record
    ) -> tuple[Batch, GroupConfig, Step | None] | None:
        row = await runs.raw(tx, record.payload["run_id"])
        if row is None:
            raise LookupError(f"run {record.payload['run_id']} has no row")
        if row["redaction"] == Redaction.erased.value:
            return None  # the erase ended it (failed, content gone)
        if await withdraw_erased(tx, [row["run_id"]], self.deps.clock.now()):
            return None  # admitted before the erase
        if row["redaction"] is not None:
            raise LookupError(f"run {row['run_id']} has no raw input left ({row['redaction']})")
        run = RunRecord.from_row(row)
        group = await self.groups.get(run.project, run.group)
        batch = run.batch()
        step = group.step(run.starting_step_id)
        if not takes_raw_input(step):  # a root past extraction: items enter as they are
            batch.candidates, batch.inputs = pre_extracted_candidates(batch), []
        return batch, group, step

    async def _start_flush(self, record: Record) -> tuple[Batch, GroupConfig, Step | None]:
        p = record.payload
        group = await self.groups.get(p["project"], p["group"])
        batch = Batch(
            batch_id=p["flush_id"],
            project=p["project"],
            group=p["group"],
            scope_key=record.scope_key,
            run_ids=p["run_ids"],
            user_id=p["user_id"],
            properties=p["properties"],
            candidates=[Candidate.model_validate(c) for c in p["items"]],
            event_time=p.get("event_time"),
        )
        return batch, group, group.pipeline.following(group.step(p["step_id"]))

    async def execute(
        self, tx: AsyncConnection, group: GroupConfig, step: Step | None, batch: Batch
    ) -> None:
        """Run the pipeline from `step` until it ends or the batch waits in a buffer."""
        while step is not None:
            step = await run_chain(self.deps, group, step, batch, LLM_KINDS)
            if step is None:
                return
            started = time.perf_counter()
            if isinstance(step, BufferStep):
                with step_span(step, batch):
                    if not await self._buffer(tx, group, step, batch):
                        return
            elif isinstance(step, CommitStep):
                ops = await commit(self.deps, tx, group, step, batch)
                if ops is not None and ops.withdrawn:
                    return  # an erased user's runs: nothing was committed, nothing goes on
                for scope in ops.due if ops else []:
                    await self.bus.publish(tx, PIPELINE_CHANNEL, scope.key, check_payload(scope))
            metrics.STEP_LATENCY.labels(step=step.kind).observe(time.perf_counter() - started)
            step = group.pipeline.following(step)

    async def _buffer(
        self, tx: AsyncConnection, group: GroupConfig, step: BufferStep, batch: Batch
    ) -> bool:
        """Hold the batch in the step's buffer; True when the pipeline goes on now (a
        sliding window), False when the batch waits for a flush."""
        buffer = buffers.BufferKey(batch.project, batch.group, step.id, batch.scope_key)
        now = self.deps.clock.now()
        erased = await tombstones.guard(tx, batch.run_ids)
        if erased:  # the user was erased while the batch was in flight: hold nothing
            others = [r for r in batch.run_ids if r not in erased]
            await erasure.withdraw(tx, erased, others, now)
            return False
        if step.mode == "sliding_window":
            earlier = [
                WindowEntry(i.run_id, i.payload["units"]) for i in await buffers.items(tx, buffer)
            ]
            units = [u for raw in batch.inputs for u in raw.text_units()]
            _, batch.window = slide(earlier, batch.run_id, units, step.window)
            await buffers.append(tx, buffer, batch.run_id, [{"units": units}], now)
            await buffers.trim(tx, buffer, step.window)
            return True
        assert step.triggers is not None
        rows = await buffers.items(tx, buffer, lock=True)
        watermark = await buffers.watermark(tx, buffer)
        payloads = _buffer_payloads(batch)
        arriving = items_of(
            [_held(buffers.BufferedItem(0, batch.run_id, p, now)) for p in payloads]
        )
        reason = flush_before(step.triggers, items_of([_held(i) for i in rows]), watermark,
                              arriving, now)  # fmt: skip
        if reason is not None:
            await self._flush(tx, step, buffer, rows, reason)
        mark = advance(watermark, arriving)
        assert mark is not None
        await buffers.advance_watermark(tx, buffer, mark)
        await buffers.append(tx, buffer, batch.run_id, payloads, now)
        await runs.set_status(tx, batch.run_ids, RunState.in_buffer, now)
        await self.flush_if_due(tx, step, buffer)
        return False

    async def flush_if_due(
        self, tx: AsyncConnection, step: BufferStep, buffer: buffers.BufferKey
    ) -> str | None:
        """Turn the scope's buffer into one flush record when a trigger fires."""
        assert step.triggers is not None
        now = self.deps.clock.now()
        rows = await buffers.items(tx, buffer, lock=True)
        watermark = await buffers.watermark(tx, buffer)
        if flush_reason(step.triggers, items_of([_held(i) for i in rows]), now, watermark) is None:
            return None
        rows = await self._without_erased(tx, rows)
        reason = flush_reason(step.triggers, items_of([_held(i) for i in rows]), now, watermark)
        if reason is not None:
            await self._flush(tx, step, buffer, rows, reason)
        return reason

    async def _flush(
        self,
        tx: AsyncConnection,
        step: BufferStep,
        buffer: buffers.BufferKey,
        rows: list[buffers.BufferedItem],
        reason: str,
    ) -> None:
        """Publish the buffered `rows` as one flush record and empty the buffer of them."""
        held = [_held(i) for i in rows]
        batch_id = flush_id(buffer.group, step.id, buffer.scope_key, [h.run_id for h in held])
        batch = flush_batch(batch_id, buffer.project, buffer.group, buffer.scope_key, held)
        payload: dict[str, Any] = {
            "kind": FLUSH,
            "flush_id": batch.batch_id,
            "project": buffer.project,
            "group": buffer.group,
            "step_id": step.id,
            "reason": reason,
            "run_ids": batch.run_ids,
            "user_id": batch.user_id,
            "properties": batch.properties,
            "items": [c.model_dump(mode="json") for c in batch.candidates],
            "event_time": batch.event_time.isoformat() if batch.event_time else None,
            "traces": unique_traces([i.payload.get("_trace") for i in rows]),
        }
        await self.bus.publish(tx, PIPELINE_CHANNEL, buffer.scope_key, payload)
        await buffers.remove(tx, [i.id for i in rows])
        log.info("buffer %s/%s flushed %d items (%s)", buffer.group, step.id, len(rows), reason)

    async def _without_erased(
        self, tx: AsyncConnection, rows: list[buffers.BufferedItem]
    ) -> list[buffers.BufferedItem]:
        """The items minus those of erased runs, which are deleted (an erase skips items a
        flush holds locked) before anything of them is flushed."""
        erased = await tombstones.guard(tx, {i.run_id for i in rows})
        if not erased:
            return rows
        await buffers.remove(tx, [i.id for i in rows if i.run_id in erased])
        await erasure.redact_erased_runs(tx, erased, self.deps.clock.now())
        return [i for i in rows if i.run_id not in erased]


def _buffer_payloads(batch: Batch) -> list[dict[str, Any]]:
    """One row per candidate, with the run's scope and input time; a run that extracted
    nothing still waits in the buffer (a marker row), so its status stays honest."""
    scope = {
        "_user_id": batch.user_id,
        "_properties": batch.properties,
        "_event_time": batch.event_time.isoformat() if batch.event_time else None,
        "_trace": spans.carrier() or None,  # the run's trace, continued by the flush
    }
    rows = [{**c.model_dump(mode="json"), **scope} for c in batch.candidates]
    return rows or [{"_marker": True, "topic": None, **scope}]


def _held(item: buffers.BufferedItem) -> Held:
    p = item.payload
    candidates = () if p.get("_marker") else (Candidate.model_validate(_strip(p)),)
    event_time = datetime.fromisoformat(p["_event_time"]) if p.get("_event_time") else None
    return Held(
        item.run_id, item.created_at, p.get("_user_id"), p.get("_properties") or {}, candidates,
        event_time,
    )  # fmt: skip


def _strip(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if not k.startswith("_")}
