"""The extractor's stage: admit a raw event (tracking outside producers' runs), then extract."""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

from mnemo.core.admission import check_add
from mnemo.core.buffering import WindowEntry, slide
from mnemo.core.dispatch import run_chain
from mnemo.core.failures import describe
from mnemo.core.groups import GroupCache
from mnemo.core.records import RunRecord
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import BufferStep, Step
from mnemo.domain.requests import AddRequest
from mnemo.events.raw import RawEvent
from mnemo.stages.routing import EXTRACTOR_KINDS, Emit, forward
from mnemo.steps.base import Batch, Deps
from mnemo.store import runs

log = logging.getLogger(__name__)
# Sliding windows by "{group}|{step id}|{scope key}": [{"run_id", "units"}, ...].
Windows = MutableMapping[str, list[dict[str, Any]]]


async def extract_stage(
    deps: Deps, groups: GroupCache, event: RawEvent, run_id: str, windows: Windows
) -> list[Emit]:
    """Run the entry steps a raw add starts with (sliding windows, extract) and route on.

    Returns nothing for a run that already completed (a redelivery) or that the gateway
    refused (its producer may still deliver the record after answering 503). Raises for an add the
    pipeline refuses; its run row then exists and is marked failed.
    """
    admitted = await admit(deps, groups, event, run_id)
    if admitted is None:
        return []
    group, run = admitted
    batch = Batch(
        batch_id=run_id,
        project=run.project,
        group=run.group,
        scope_key=run.scope_key,
        run_ids=[run_id],
        user_id=run.user_id,
        properties=run.properties,
        inputs=[event.input],
    )
    step: Step | None = group.pipeline.step(run.starting_step_id)
    while isinstance(step, BufferStep) and step.mode == "sliding_window":
        key = f"{batch.group}|{step.id}|{batch.scope_key}"
        units = [u for raw in batch.inputs for u in raw.text_units()]
        window, batch.window = slide(_entries(windows.get(key)), run_id, units, step.window)
        windows[key] = [{"run_id": e.run_id, "units": list(e.units)} for e in window]
        step = group.pipeline.following(step)
    step = await run_chain(deps, group, step, batch, EXTRACTOR_KINDS)
    return forward(step, batch, {run_id: run.created_at})


def _entries(stored: list[dict[str, Any]] | None) -> list[WindowEntry]:
    return [WindowEntry(e["run_id"], e["units"]) for e in stored or []]


async def admit(
    deps: Deps, groups: GroupCache, event: RawEvent, run_id: str
) -> tuple[GroupConfig, RunRecord] | None:
    """The group and run of a raw add; the run's row is created if an outside producer
    sent it (failed, with the reason, if the add is refused)."""
    async with deps.db.connect() as conn:
        existing = await runs.raw(conn, run_id)
    if existing is not None:
        if existing["status"] == RunState.completed.value:
            return None
        run = RunRecord.from_row(existing)
        return await groups.get(run.project, run.group), run
    if event.origin == "gateway":
        log.warning("run %s was refused by the gateway (no row); dropping its record", run_id)
        return None
    group: GroupConfig | None = None
    try:
        group = await groups.get(event.project, event.group)
        check_add(group, _request(event))
    except Exception as exc:
        async with deps.db.begin() as tx:
            await runs.ensure(tx, _record(event, run_id, group, deps, describe(exc)).to_row())
        raise
    run = _record(event, run_id, group, deps)
    async with deps.db.begin() as tx:
        await runs.ensure(tx, run.to_row())
    return group, run


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
    """The run an add through the gateway would have had (refused: failed with `error`)."""
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
        created_at=event.created_at,
        error=error,
        recalled=event.recalled,
    )
