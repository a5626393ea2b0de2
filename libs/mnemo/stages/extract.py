"""The extractor's stage: admit a raw event (tracking outside producers' runs), then extract."""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from datetime import datetime
from typing import Any

from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import RunState
from mnemo.domain.pipeline import BufferStep, Step
from mnemo.domain.requests import AddRequest
from mnemo.domain.scope import normalize_user_id, scope_key
from mnemo.engine.admission import check_add
from mnemo.engine.groups import GroupCache
from mnemo.events.raw import RawEvent
from mnemo.stages import runrows
from mnemo.stages.routing import EXTRACTOR_KINDS, Emit, forward
from mnemo.steps.base import Batch, Deps
from mnemo.steps.dispatch import run_chain
from mnemo.store import runs

log = logging.getLogger(__name__)
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
    group, row = admitted
    batch = Batch(
        batch_id=run_id,
        project=row["project"],
        group=row["group"],
        scope_key=row["scope_key"],
        run_ids=[run_id],
        user_id=row["user_id"],
        properties=row["properties"],
        inputs=[event.input],
    )
    step: Step | None = group.pipeline.step(row["starting_step_id"])
    while isinstance(step, BufferStep) and step.mode == "sliding_window":
        key = f"{batch.group}|{step.id}|{batch.scope_key}"
        units = [u for raw in batch.inputs for u in raw.text_units()]
        batch.window = slide(windows, key, run_id, units, step.window)
        step = group.pipeline.following(step)
    step = await run_chain(deps, group, step, batch, EXTRACTOR_KINDS)
    return forward(step, batch, {run_id: row["created_at"]})


def slide(windows: Windows, key: str, run_id: str, units: list[str], size: int) -> list[str]:
    """Keep the scope's last `size` inputs; return the earlier ones' units as context."""
    earlier = [e for e in windows.get(key) or [] if e["run_id"] != run_id]
    windows[key] = [*earlier, {"run_id": run_id, "units": units}][-size:]
    return [u for entry in earlier for u in entry["units"]]


async def admit(
    deps: Deps, groups: GroupCache, event: RawEvent, run_id: str
) -> tuple[GroupConfig, Mapping[str, Any]] | None:
    """The group and run row of a raw add; the row is created if an outside producer sent it."""
    async with deps.db.connect() as conn:
        existing = await runs.raw(conn, run_id)
    if existing is not None:
        if existing["status"] == RunState.completed.value:
            return None
        return await groups.get(existing["project"], existing["group"]), existing
    if event.origin == "gateway":
        log.warning("run %s was refused by the gateway (no row); dropping its record", run_id)
        return None
    now = deps.clock.now()
    try:
        group = await groups.get(event.project, event.group)
        request = AddRequest(
            input=event.input,
            user_id=event.user_id,
            group=event.group,
            properties=event.properties or None,
            root=event.root,
        )
        check_add(group, request)
    except Exception as exc:
        async with deps.db.begin() as tx:
            await runrows.ensure(tx, failed_row(event, run_id, now, exc))
        raise
    row = run_row(event, run_id, group, now)
    async with deps.db.begin() as tx:
        await runrows.ensure(tx, row)
    return group, row


def run_row(event: RawEvent, run_id: str, group: GroupConfig, now: datetime) -> dict[str, Any]:
    """The runs row an add through the gateway would have had."""
    entry = group.pipeline.entry_for(event.input.input_type, event.root)
    user_id = normalize_user_id(event.user_id)
    return {
        "run_id": run_id,
        "project": event.project,
        "group": group.name,
        "input_type": event.input.input_type,
        "starting_step": group.pipeline.index_of(entry.id),
        "starting_step_id": entry.id,
        "user_id": user_id,
        "properties": event.properties,
        "scope_key": scope_key(
            event.project, group.name, user_id, event.properties, group.scope_property_keys
        ),
        "status": RunState.running.value,
        "raw_input": event.input.model_dump(mode="json", exclude_none=True),
        "committed_operations": None,
        "error": None,
        "created_at": event.created_at or now,
        "updated_at": now,
    }


def failed_row(event: RawEvent, run_id: str, now: datetime, exc: Exception) -> dict[str, Any]:
    """The row of an outside add the pipeline refused, so its run reports why."""
    return {
        "run_id": run_id,
        "project": event.project,
        "group": event.group,
        "input_type": event.input.input_type,
        "starting_step": 0,
        "starting_step_id": event.root or "",
        "user_id": normalize_user_id(event.user_id),
        "properties": event.properties,
        "scope_key": event.key_for(event.properties),
        "status": RunState.failed.value,
        "raw_input": event.input.model_dump(mode="json", exclude_none=True),
        "committed_operations": None,
        "error": f"{exc.__class__.__name__}: {exc}"[:2000],
        "created_at": event.created_at or now,
        "updated_at": now,
    }
