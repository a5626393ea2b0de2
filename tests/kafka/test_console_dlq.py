"""The console's DLQ page in distributed mode: a project sees only its own dead letters."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn

from mnemo.gateway.app import create_app
from tests.kafka.conftest import Cluster
from tests.kafka.helpers import add, wait_all
from tests.kafka.services import free_port
from tests.kafka.test_dlq import dlq_with

pytestmark = pytest.mark.kafka


@pytest.fixture
async def console(cluster: Cluster) -> AsyncIterator[str]:
    """A distributed-mode gateway with keys required, on the cluster's engine."""
    settings = cluster.settings.model_copy(update={"mode": "distributed", "auth_disabled": False})
    port = free_port()
    config = uvicorn.Config(
        create_app(settings, cluster.engine), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


async def test_the_dlq_page_lists_the_projects_dead_letters_only(
    cluster: Cluster, project: str, console: str
) -> None:
    cluster.llm.fail("extract", status=500, times=2)  # the services make 2 attempts
    run = await add(cluster.engine, project, "poison", "I will be dead-lettered")
    await wait_all(cluster.engine, project, [run.run_id], timeout=60, status="failed")
    [entry] = await dlq_with(cluster, lambda r: run.run_id in r.run_ids)
    _, mine = await cluster.engine.create_key(project, "console")
    _, theirs = await cluster.engine.create_key(f"p-{uuid.uuid4().hex[:10]}", "console")

    async with httpx.AsyncClient(base_url=console, timeout=60) as client:
        page = await client.get("/console/dlq", headers={"Authorization": f"Bearer {mine}"})
        assert page.status_code == 200, page.text
        assert f'href="/console/runs/{run.run_id}"' in page.text
        assert f"{entry.partition}:{entry.offset}" in page.text and "llm" in page.text
        assert ">DLQ</a>" in page.text  # the navigation shows the page in distributed mode

        other = await client.get("/console/dlq", headers={"Authorization": f"Bearer {theirs}"})
        assert other.status_code == 200
        assert run.run_id not in other.text
        assert "The DLQ holds no record of this project." in other.text
        assert "belong to other projects or name no run" in other.text
