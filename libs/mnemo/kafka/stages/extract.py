"""The extractor's stage: admit a raw event (tracking outside producers' runs), then extract.

Erased users' records are dropped here: a run whose row an erase redacted, a run admitted
before its user's erase (its row is redacted now), and an outside producer's record that
was appended to the raw log before its user's erase (its offset is below the tombstone's).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.admission import check_add
from mnemo.core.dispatch import run_chain
from mnemo.core.failures import describe
from mnemo.core.groups import GroupCache
from mnemo.core.records import RunRecord
from mnemo.core.withdrawal import withdraw_erased
from mnemo.deps import Deps
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import BufferStep, Step
from mnemo.domain.requests import AddRequest
from mnemo.domain.scope import normalize_user_id
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.stages import windows as sliding
from mnemo.kafka.stages.routing import EXTRACTOR_KINDS, Emit, forward
from mnemo.store import retention, runs, tombstones

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RawPosition:
    """Where a raw record sits in the raw log, and its timestamp (if the broker gave one)."""

    topic: str
    partition: int
    offset: int
    timestamp: datetime | None = None


async def extract_stage(
    deps: Deps,
    groups: GroupCache,
    event: RawEvent,
    run_id: str,
    windows: sliding.Windows,
    position: RawPosition,
) -> list[Emit]:
    """Run the entry steps a raw add starts with (sliding windows, extract) and route on.

    Returns nothing for a run that already completed (a redelivery), that the gateway
    refused (its producer may still deliver the record after answering 503), or whose user
    was erased. Raises for an add the pipeline refuses; its run row then exists and is
    marked failed.
    """
    admitted = await admit(deps, groups, event, run_id, position)
    if admitted is None:
        return []
    group, run = admitted
    batch = run.batch()
    step: Step | None = group.step(run.starting_step_id)
    while isinstance(step, BufferStep) and step.mode == "sliding_window":
        key = sliding.window_key(batch.group, step.id, batch.scope_key)
        units = [u for raw in batch.inputs for u in raw.text_units()]
        earlier = {e.run_id for e in sliding.entries(windows.get(key))}
        async with deps.db.connect() as conn:
            gone = await retention.raw_input_gone(conn, earlier)
        batch.window = sliding.slide_into(
            windows, key, run_id, units, step.window, position.partition, gone
        )
        step = group.pipeline.following(step)
    step = await run_chain(deps, group, step, batch, EXTRACTOR_KINDS)
    return forward(step, batch, {run_id: run.created_at})


async def admit(
    deps: Deps, groups: GroupCache, event: RawEvent, run_id: str, position: RawPosition
) -> tuple[GroupConfig, RunRecord] | None:
    """The group and run of a raw add, taken by the pipeline (`runs.admit`); the run's row
    is created if an outside producer sent it (failed, with the reason, if the pipeline
    refuses the add). None for a record not to process: its run completed (a redelivery),
    the gateway refused the add (no row), the Engine gave up on its retry, or its user was
    erased."""
    now = deps.clock.now()
    async with deps.db.begin() as tx:
        existing = await runs.admit(tx, run_id, now)
    if existing is runs.Admission.withdrawn:
        log.warning("run %s: its retry was refused (503); dropping its record", run_id)
        return None
    if not isinstance(existing, runs.Admission):
        return await _known(deps, groups, existing)
    if event.origin == "gateway":
        log.warning("run %s was refused by the gateway (no row); dropping its record", run_id)
        return None
    group: GroupConfig | None = None
    refused: Exception | None = None
    try:
        group = await groups.get(event.project, event.group)
        check_add(group, _request(event), deps.settings.limits)
    except Exception as exc:
        refused = exc
    run = _record(event, run_id, group, deps, describe(refused) if refused else None)
    async with deps.db.begin() as tx:
        if await _erased_before(tx, event, position):
            log.info("run %s: its user was erased after it was produced; dropped", run_id)
            return None
        await runs.ensure(tx, {**run.to_row(), "admitted_at": now})
    if refused is not None:
        raise refused
    assert group is not None
    return group, run


async def _known(
    deps: Deps, groups: GroupCache, row: Mapping[str, Any]
) -> tuple[GroupConfig, RunRecord] | None:
    """A run that has its row: skip it if it completed or its user was erased."""
    if row["status"] == RunState.completed.value:
        return None
    async with deps.db.begin() as tx:
        if await withdraw_erased(tx, [row["run_id"]], deps.clock.now()):
            log.info("run %s: its user was erased; dropped", row["run_id"])
            return None
    if row["redaction"] is not None:
        raise LookupError(f"run {row['run_id']} has no raw input left ({row['redaction']})")
    run = RunRecord.from_row(row)
    return await groups.get(run.project, run.group, row[runs.GROUP_STORED_AT]), run


async def _erased_before(tx: AsyncConnection, event: RawEvent, position: RawPosition) -> bool:
    """Whether the event's user was erased after this record was appended (the user's erase
    lock is held, shared, until the run row is written)."""
    user = normalize_user_id(event.user_id)
    if user is None:
        return False
    tombstone = await tombstones.guard_user(tx, event.project, user)
    return tombstone is not None and tombstone.covers_raw_record(
        position.topic, position.partition, position.offset, position.timestamp
    )


def _request(event: RawEvent) -> AddRequest:
    return AddRequest(
        input=event.input,
        user_id=event.user_id,
        group=event.group,
        properties=event.properties or None,
        root=event.root,
        recalled=event.recalled,
    )


def _record(
    event: RawEvent, run_id: str, group: GroupConfig | None, deps: Deps, error: str | None = None
) -> RunRecord:
    """The run an add through the gateway would have had (refused: failed with `error`).
    Its `created_at` is when the pipeline admitted it, as for a gateway add (run latency
    counts from there); the event's own `created_at` is event time, not the run's."""
    return RunRecord.new(
        run_id=run_id,
        project=event.project,
        group=group.name if group is not None else event.group,
        config=group,
        input=event.input,
        user_id=event.user_id,
        properties=event.properties,
        root=event.root,
        now=deps.clock.now(),
        input_time=event.created_at,
        error=error,
        recalled=event.recalled,
    )
