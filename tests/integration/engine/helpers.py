"""Small helpers for engine tests."""

from __future__ import annotations

import uuid
from typing import Any

from mnemo.clock import ManualClock
from mnemo.core.engine import Engine
from mnemo.core.records import RunRecord
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import Memory, Run
from mnemo.domain.requests import AddRequest, ListRequest, SearchRequest
from mnemo.embedded.ticker import tick
from mnemo.embedded.transport import EmbeddedTransport
from mnemo.embedded.worker import WorkerPool


async def add(engine: Engine, project: str, body: dict[str, Any]) -> Run:
    return await engine.add(project, AddRequest.model_validate(body))


async def submit_past_admission(
    engine: Engine, project: str, user: str, input: dict[str, Any], root: str | None = None
) -> str:
    """Write a run straight to the transport, as an add that admission (its size limits)
    would refuse but that reached the pipeline anyway. Returns its run id."""
    record = RunRecord.new(
        run_id=str(uuid.uuid4()),
        project=project,
        group="default",
        config=await engine.group(project, "default"),
        input=AddInput.model_validate(input),
        user_id=user,
        properties={},
        root=root,
        now=engine.deps.clock.now(),
    )
    await engine.transport.submit(record)
    return record.run_id


async def add_and_wait(
    engine: Engine, project: str, body: dict[str, Any], timeout: float = 20
) -> Run:
    run = await add(engine, project, body)
    done = await engine.wait_run(project, run.run_id, timeout)
    assert done.status.terminal, f"run {run.run_id} did not finish: {done.status}"
    return done


def says(*content: str) -> dict[str, Any]:
    return {"string": {"content": list(content)}}


def chat(*turns: tuple[str, str]) -> dict[str, Any]:
    return {"conversation": {"messages": [{"role": r, "content": c} for r, c in turns]}}


def facts(*items: tuple[str, str]) -> dict[str, Any]:
    return {"pre_extracted": {"items": [{"topic": t, "content": c} for t, c in items]}}


async def listing(engine: Engine, project: str, **body: Any) -> list[Memory]:
    memories, _ = await engine.list_memories(project, ListRequest.model_validate(body))
    return memories


async def search(
    engine: Engine, project: str, query: str, mode: str = "hybrid", **body: Any
) -> list[Memory]:
    request = SearchRequest.model_validate(
        {"query": query, "retrieval_config": {"retrieval_type": mode}, **body}
    )
    return await engine.search(project, request)


class Harness:
    """An engine whose workers and ticker only run when the test says so."""

    def __init__(self, engine: Engine, clock: ManualClock) -> None:
        self.clock = clock
        self.bind(engine)

    def bind(self, engine: Engine) -> None:
        assert isinstance(engine.transport, EmbeddedTransport)
        self.engine, self.transport = engine, engine.transport
        budget = engine.settings.run_time_budget_seconds
        self.pool = WorkerPool(self.transport.runner, self.transport.bus, 1, 0.01, budget)

    async def drain(self) -> None:
        while await self.pool.run_once():
            pass

    async def tick(self) -> int:
        flushed = await tick(self.transport.runner)
        await self.drain()
        return flushed

    async def status(self, project: str, run_id: str) -> str:
        return (await self.engine.get_run(project, run_id)).status.value
