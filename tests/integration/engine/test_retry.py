"""`retry_run` claims a failed run atomically and never leaves it `running` with nothing in
flight: a transport that fails between the claim and the publish, and two concurrent retries."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.core.engine import Engine
from mnemo.core.records import RunRecord
from mnemo.core.transport import RunTransport, TransportUnavailable
from mnemo.domain.idempotency import IdempotencyClaim
from mnemo.domain.memory import Run, RunState
from mnemo.domain.requests import InvalidRequest, NotFound
from mnemo.gateway.app import create_app
from tests.integration.conftest import echo_extract
from tests.integration.engine.helpers import add_and_wait, listing, says
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


class BrokenTransport:
    """The embedded transport, except for retries. `fail_in="stage"`: its queue write inside
    the claim's transaction fails (the database queue is unreachable). `fail_in="publish"`:
    it acts as a transport with its own broker (nothing staged in the database) whose
    publish, after the claim committed, fails."""

    def __init__(self, inner: RunTransport, fail_in: str) -> None:
        self.inner = inner
        self.fail_in = fail_in
        self.calls: list[str] = []

    async def submit(self, record: RunRecord, idempotency: IdempotencyClaim | None = None) -> None:
        await self.inner.submit(record, idempotency)

    async def stage(self, claim: AsyncConnection, record: RunRecord) -> None:
        self.calls.append("stage")
        if self.fail_in == "stage":
            await self.inner.stage(claim, record)  # rolled back with the claim
            raise ConnectionRefusedError(111, "queue unreachable")

    async def publish(self, record: RunRecord) -> None:
        self.calls.append("publish")
        raise ConnectionRefusedError(111, "broker unreachable")

    async def raw_log_position(self) -> dict[str, Any] | None:
        return await self.inner.raw_log_position()

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def unavailable(self) -> str | None:
        return None


def broken(engine: Engine, fail_in: str) -> tuple[Engine, BrokenTransport]:
    """An Engine on the same database, providers and groups, with a broken transport."""
    transport = BrokenTransport(engine.transport, fail_in)
    return Engine(
        engine.settings, engine.database, engine.deps, engine.groups, transport
    ), transport


async def failed_run(engine: Engine, llm: ScriptedLLMServer, project: str, text: str) -> Run:
    llm.fail("extract", status=503, times=10)
    run = await add_and_wait(engine, project, {"user_id": "u1", "input": says(text)})
    assert run.status == RunState.failed and run.error and "503" in run.error
    llm.reset()
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", {"existing": [], "new": []})
    return run


@pytest.mark.parametrize("fail_in", ["stage", "publish"])
async def test_a_retry_the_transport_refuses_leaves_the_run_failed_and_retryable(
    engine: Engine, llm: ScriptedLLMServer, project: str, fail_in: str
) -> None:
    failed = await failed_run(engine, llm, project, "I like tea")
    faulty, transport = broken(engine, fail_in)

    with pytest.raises(TransportUnavailable) as refused:
        await faulty.retry_run(project, failed.run_id)
    assert refused.value.kind == "unavailable" and refused.value.retry_after
    assert transport.calls == (["stage"] if fail_in == "stage" else ["stage", "publish"])

    after = await engine.get_run(project, failed.run_id)
    assert after.status == RunState.failed
    assert after.error is not None and after.error.startswith(failed.error or "")
    assert "[retry not started: ConnectionRefusedError: [Errno 111]" in after.error
    # A second refused retry notes the latest failure once, on the original error.
    with pytest.raises(TransportUnavailable):
        await faulty.retry_run(project, failed.run_id)
    again = await engine.get_run(project, failed.run_id)
    assert again.error is not None and again.error.count("[retry not started") == 1
    await asyncio.sleep(0.3)  # nothing was left in flight: the run stays failed
    assert (await engine.get_run(project, failed.run_id)).status == RunState.failed

    retried = await engine.retry_run(project, failed.run_id)
    assert retried.status == RunState.running and retried.error is None
    done = await engine.wait_run(project, failed.run_id, 20)
    assert done.status == RunState.completed and done.error is None
    assert [m.content for m in await listing(engine, project, user_id="u1")] == ["I like tea"]


async def test_only_failed_runs_retry(engine: Engine, llm: ScriptedLLMServer, project: str) -> None:
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", {"existing": [], "new": []})
    done = await add_and_wait(engine, project, {"user_id": "u1", "input": says("Done already")})
    with pytest.raises(InvalidRequest) as conflict:
        await engine.retry_run(project, done.run_id)
    assert conflict.value.kind == "conflict" and "completed" in conflict.value.detail
    with pytest.raises(NotFound):
        await engine.retry_run(project, "no-such-run")
    with pytest.raises(NotFound):  # another project's run is not there either
        await engine.retry_run("another-project", done.run_id)


async def test_the_gateway_answers_503_with_retry_after(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    failed = await failed_run(engine, llm, project, "I like juice")
    faulty, _ = broken(engine, "publish")
    settings = engine.settings.model_copy(update={"auth_disabled": True, "project": project})
    app = create_app(settings, faulty)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as http:
        response = await http.post(f"/v1/runs/{failed.run_id}/retry")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "was not retried" in response.json()["detail"]
    assert (await engine.get_run(project, failed.run_id)).status == RunState.failed
