"""Erase with runs queued and buffers pending: nothing of the erased user is committed,
their open runs end failed and redacted, a later add of the same user starts clean, and
other users' buffers are untouched."""

from __future__ import annotations

from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import (
    add,
    buffered_group,
    completed,
    contents,
    finished,
    items,
    reach,
    script_digest,
)


async def test_erase_withdraws_queued_and_buffered_runs(mode: Mode, project: str) -> None:
    group = buffered_group({"triggers": {"count": 100, "topics_present": ["Urgent"]}})
    await mode.engine.put_group(project, "notes", group)
    script_digest(mode)
    held = await add(mode, project, "notes", "eve", items(("Note", "secret one")))
    other = await add(mode, project, "notes", "ada", items(("Note", "ada's note")))
    await reach(mode, project, held.run_id, "in_buffer")
    await reach(mode, project, other.run_id, "in_buffer")
    queued = [await add(mode, project, "notes", "eve", items(("Note", f"secret {n}")))
              for n in ("two", "three")]  # fmt: skip
    report = await mode.engine.erase_user(project, "eve")
    assert report.runs_redacted >= 1
    for run in (held, *queued):
        done = await finished(mode, project, run.run_id)
        assert done.status.value == "failed", done
    # The same user again: only what came after the erase is flushed.
    fresh = [
        await add(mode, project, "notes", "eve", items(("Note", "new note"))),
        await add(mode, project, "notes", "eve", items(("Urgent", "new urgent"))),
    ]
    await completed(mode, project, *(r.run_id for r in fresh))
    assert await contents(mode, project, "notes", "eve", topics=["Digest"]) == [
        "new note | new urgent"
    ]
    # The other user's buffer kept its run.
    urgent = await add(mode, project, "notes", "ada", items(("Urgent", "ada's urgent")))
    await completed(mode, project, other.run_id, urgent.run_id)
    assert await contents(mode, project, "notes", "ada", topics=["Digest"]) == [
        "ada's note | ada's urgent"
    ]
