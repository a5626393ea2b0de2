"""Drive one bus record through its pipeline steps inside the record's transaction.

Everything a record changes (buffer items, commits, the next record, run status) is written
in the transaction that also acknowledges it, so a crash replays the record from scratch and
nothing is applied twice.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo import metrics
from mnemo.bus.base import FLUSH, PIPELINE_TOPIC, RUN, Bus, Record
from mnemo.domain.group import GroupConfig
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import Candidate, RunState
from mnemo.domain.pipeline import (
    BufferStep,
    CommitStep,
    ExtractStep,
    Step,
    TransformStep,
    TransformWithContextStep,
)
from mnemo.engine.groups import GroupCache
from mnemo.steps.base import Batch, Deps
from mnemo.steps.buffer import Buffered, flush_reason
from mnemo.steps.commit import commit
from mnemo.steps.dispatch import run_step
from mnemo.steps.extract import pre_extracted_candidates
from mnemo.store import buffers, runs

log = logging.getLogger(__name__)


class PipelineRunner:
    def __init__(self, deps: Deps, bus: Bus, groups: GroupCache) -> None:
        self.deps = deps
        self.bus = bus
        self.groups = groups

    async def handle(self, tx: AsyncConnection, record: Record) -> None:
        kind = record.payload["kind"]
        metrics.RECORDS_IN.labels(stage=kind).inc()
        if kind == RUN:
            batch, group, step = await self._start_run(tx, record)
        elif kind == FLUSH:
            batch, group, step = await self._start_flush(record)
        else:
            raise ValueError(f"unknown record kind {kind!r}")
        await self.execute(tx, group, step, batch)

    async def _start_run(
        self, tx: AsyncConnection, record: Record
    ) -> tuple[Batch, GroupConfig, Step | None]:
        row = await runs.raw(tx, record.payload["run_id"])
        if row is None:
            raise LookupError(f"run {record.payload['run_id']} has no row")
        group = await self.groups.get(row["project"], row["group"])
        batch = Batch(
            batch_id=row["run_id"],
            project=row["project"],
            group=row["group"],
            scope_key=row["scope_key"],
            run_ids=[row["run_id"]],
            user_id=row["user_id"],
            properties=row["properties"],
            inputs=[AddInput.model_validate(row["raw_input"])],
        )
        step = group.pipeline.step(row["starting_step_id"])
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
            scope_key=record.key,
            run_ids=p["run_ids"],
            user_id=p["user_id"],
            properties=p["properties"],
            candidates=[Candidate.model_validate(c) for c in p["items"]],
        )
        return batch, group, group.pipeline.following(group.pipeline.step(p["step_id"]))

    async def execute(
        self, tx: AsyncConnection, group: GroupConfig, step: Step | None, batch: Batch
    ) -> None:
        while step is not None:
            started = time.perf_counter()
            proceed = await self._step(tx, group, step, batch)
            metrics.STEP_LATENCY.labels(step=step.kind).observe(time.perf_counter() - started)
            if not proceed:
                return
            step = group.pipeline.following(step)

    async def _step(
        self, tx: AsyncConnection, group: GroupConfig, step: Step, batch: Batch
    ) -> bool:
        d = self.deps
        if isinstance(step, ExtractStep | TransformStep | TransformWithContextStep):
            await run_step(d, group, step, batch)
        elif isinstance(step, BufferStep):
            return await self._buffer(tx, group, step, batch)
        elif isinstance(step, CommitStep):
            await commit(d, tx, group, step, batch)
        return True

    async def _buffer(
        self, tx: AsyncConnection, group: GroupConfig, step: BufferStep, batch: Batch
    ) -> bool:
        key = buffers.BufferKey(batch.project, batch.group, step.id, batch.scope_key)
        now = self.deps.clock.now()
        if step.mode == "sliding_window":
            earlier = await buffers.items(tx, key)
            batch.window = [u for item in earlier for u in item.payload["units"]]
            units = [u for raw in batch.inputs for u in raw.text_units()]
            await buffers.append(tx, key, batch.run_id, [{"units": units}], now)
            await buffers.trim(tx, key, step.window)
            return True
        assert step.triggers is not None
        await buffers.append(
            tx,
            key,
            batch.run_id,
            [
                {
                    **c.model_dump(mode="json"),
                    "_user_id": batch.user_id,
                    "_properties": batch.properties,
                }
                for c in batch.candidates
            ]
            or [_marker(batch)],
            now,
        )
        await runs.set_status(tx, batch.run_ids, RunState.in_buffer, now)
        await self.flush_if_due(tx, group, step, key)
        return False

    async def flush_if_due(
        self, tx: AsyncConnection, group: GroupConfig, step: BufferStep, key: buffers.BufferKey
    ) -> str | None:
        """Turn the scope's buffer into one flush record when a trigger fires."""
        assert step.triggers is not None
        held = await buffers.items(tx, key, lock=True)
        reason = flush_reason(
            step.triggers,
            [Buffered(i.created_at, i.payload.get("topic")) for i in held],
            self.deps.clock.now(),
        )
        if reason is None:
            return None
        first = held[0].payload
        run_ids = list(dict.fromkeys(i.run_id for i in held))
        payload: dict[str, Any] = {
            "kind": FLUSH,
            "flush_id": str(uuid.uuid4()),
            "project": key.project,
            "group": key.group,
            "step_id": step.id,
            "reason": reason,
            "run_ids": run_ids,
            "user_id": first.get("_user_id"),
            "properties": first.get("_properties") or {},
            "items": [_strip(i.payload) for i in held if not i.payload.get("_marker")],
        }
        await self.bus.publish(tx, PIPELINE_TOPIC, key.scope_key, payload)
        await buffers.remove(tx, [i.id for i in held])
        log.info("buffer %s/%s flushed %d items (%s)", key.group, step.id, len(held), reason)
        return reason


def takes_raw_input(step: Step) -> bool:
    """Steps that see raw inputs: extraction, and sliding windows that feed it."""
    return isinstance(step, ExtractStep) or (
        isinstance(step, BufferStep) and step.mode == "sliding_window"
    )


def _marker(batch: Batch) -> dict[str, Any]:
    """A run that extracted nothing still waits in the buffer, so its status stays honest."""
    return {
        "_marker": True,
        "topic": None,
        "_user_id": batch.user_id,
        "_properties": batch.properties,
    }


def _strip(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if not k.startswith("_")}
