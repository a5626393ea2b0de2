"""as_of reads, idempotency keys and event time, on both transports."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from mnemo.domain.requests import AddRequest, InvalidRequest
from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import add, completed, contents, listing, says
from tests.behaviour.test_drafts import RECONCILED
from tests.behaviour.test_order import STATES


async def test_as_of_answers_each_instant_of_a_history(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "s", STATES)
    instants = []
    for state in ("dark mode", "light mode", "solarized mode"):
        run = await add(mode, project, "s", "u", {"pre_extracted": {"items": [
            {"topic": "State", "content": state}]}})  # fmt: skip
        await completed(mode, project, run.run_id)
        instants.append(datetime.now(UTC))
    then = [await contents(mode, project, "s", "u", as_of=at.isoformat()) for at in instants]
    assert then == [["dark mode"], ["light mode"], ["solarized mode"]]


def _add(text: str) -> AddRequest:
    body = {"group": "r", "user_id": "ida", "input": {"string": {"content": [text]}}}
    return AddRequest.model_validate(body)


async def test_an_idempotency_key_admits_one_run(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "r", RECONCILED)
    answers = await asyncio.gather(
        *(mode.engine.admit(project, _add("I keep bees"), "turn-1") for _ in range(6))
    )
    run_ids = {a.run.run_id for a in answers}
    assert len(run_ids) == 1 and [a.replayed for a in answers].count(False) == 1
    await completed(mode, project, *run_ids)
    again = await mode.engine.admit(project, _add("I keep bees"), "turn-1")
    assert again.replayed and again.run.status.value == "completed"
    with pytest.raises(InvalidRequest) as refused:
        await mode.engine.admit(project, _add("I keep wasps"), "turn-1")
    assert refused.value.kind == "conflict"
    assert await contents(mode, project, "r", "ida") == ["User said: I keep bees"]


async def test_dated_adds_keep_their_event_time(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "r", RECONCILED)
    then = datetime(2025, 5, 4, 9, 0, tzinfo=UTC)
    runs = [
        await add(mode, project, "r", "u", says("I repotted the fig", created_at=then.isoformat())),
        await add(mode, project, "r", "u", says("I pruned the roses",
                                                created_at=(then + timedelta(hours=1)).isoformat())),
    ]  # fmt: skip
    await completed(mode, project, *(r.run_id for r in runs))
    found = {m.content: m for m in await listing(mode, project, "r", "u")}
    fig, roses = found["User said: I repotted the fig"], found["User said: I pruned the roses"]
    assert fig.event_time == then and roses.event_time == then + timedelta(hours=1)
    assert fig.created_at > datetime(2026, 1, 1, tzinfo=UTC)  # system time
