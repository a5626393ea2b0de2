"""A group changed while runs wait in it: runs waiting at a step that is renamed or
removed (a buffer, or any other step) fail with an error naming the step (never waiting
forever), the pipeline keeps working for new runs, and a retry sends a failed run through
the current pipeline."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import (
    add,
    buffered_group,
    completed,
    finished,
    reach,
    says,
    script_digest,
    until,
)


def renamed(document: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """`document` with step `old` renamed to `new` (and every `next` pointing at it)."""
    steps = []
    for step in document["pipeline"]["steps"]:
        step = dict(step)
        if step["id"] == old:
            step["id"] = new
        if step.get("next") == old:
            step["next"] = new
        steps.append(step)
    return {**document, "pipeline": {"steps": steps}}


def without_buffer(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with its buffer step `hold` removed (its inputs go straight on)."""
    steps = [dict(s) for s in document["pipeline"]["steps"] if s["id"] != "hold"]
    for step in steps:
        if step.get("next") == "hold":
            step["next"] = "digest"
    return {**document, "pipeline": {"steps": steps}}


async def test_runs_held_in_a_renamed_buffer_fail_naming_it_and_retry(
    mode: Mode, project: str
) -> None:
    document = buffered_group({"triggers": {"count": 2, "idle_seconds": 60}})
    await mode.engine.put_group(project, "notes", document)
    script_digest(mode)
    held = await add(mode, project, "notes", "u", says("a"))
    await reach(mode, project, held.run_id, "in_buffer")
    await mode.engine.put_group(project, "notes", renamed(document, "hold", "hold_v2"))
    failed = await finished(mode, project, held.run_id)
    assert failed.status.value == "failed" and failed.error is not None
    assert "'hold'" in failed.error and "retry" in failed.error, failed.error
    # The partition's buffers still work: new runs flush through the renamed buffer.
    runs = [await add(mode, project, "notes", "u", says(t)) for t in ("b", "c")]
    await completed(mode, project, *(r.run_id for r in runs))
    retried = await mode.engine.retry_run(project, held.run_id)
    assert retried.status.value == "running"
    await reach(mode, project, held.run_id, "in_buffer")  # held by 'hold_v2' now


async def test_runs_held_in_a_removed_buffer_fail_naming_it(mode: Mode, project: str) -> None:
    document = buffered_group({"triggers": {"count": 2, "idle_seconds": 60}})
    await mode.engine.put_group(project, "notes", document)
    script_digest(mode)
    held = await add(mode, project, "notes", "u", says("a"))
    await reach(mode, project, held.run_id, "in_buffer")
    await mode.engine.put_group(project, "notes", without_buffer(document))
    failed = await finished(mode, project, held.run_id)
    assert failed.status.value == "failed" and failed.error is not None
    assert "'hold'" in failed.error, failed.error
    after = await add(mode, project, "notes", "u", says("b"))
    await completed(mode, project, after.run_id)  # straight through the new pipeline


def extract_calls(mode: Mode) -> Callable[[], Awaitable[list[Any]]]:
    async def read() -> list[Any]:
        return mode.llm.calls_for("extract")

    return read


async def test_a_run_waiting_at_a_renamed_step_fails_naming_it_and_retry(
    mode: Mode, project: str
) -> None:
    document = buffered_group({"triggers": {"count": 1}})
    await mode.engine.put_group(project, "notes", document)
    script_digest(mode)
    gate = mode.llm.hold("extract")
    try:
        first = await add(mode, project, "notes", "u", says("a"))
        await until(extract_calls(mode), bool, mode, "the first run in 'extract'")
        # The scope's order holds the second run at its first step, 'extract', behind it.
        second = await add(mode, project, "notes", "u", says("b"))
        await mode.engine.put_group(project, "notes", renamed(document, "extract", "ex_v2"))
    finally:
        gate.set()
    failed = await finished(mode, project, second.run_id)
    assert failed.status.value == "failed" and failed.error is not None
    assert "'extract'" in failed.error and "'notes'" in failed.error, failed.error
    assert "StopIteration" not in failed.error
    await finished(mode, project, first.run_id)  # in flight when renamed: either way, ends
    retried = await mode.engine.retry_run(project, second.run_id)
    assert retried.status.value == "running"
    await completed(mode, project, second.run_id)  # through 'ex_v2' now
