"""Load shedding: 429 with Retry-After when a project is over its add rate or its open-run
quota, 503 with Retry-After when the server's queue is full; nothing stored either way."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from mnemo.store.schema import runs
from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture
def slow_llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True, delay_seconds=30.0) as server:
        yield server


@pytest.fixture
def start(postgres: EmbeddedPostgres, slow_llm: ScriptedLLMServer, tmp_path: Path) -> Iterator[Any]:
    servers: list[LiveServer] = []

    def started(**overrides: Any) -> LiveServer:
        url = postgres.new_database()
        settings = gateway_settings(url, tmp_path, auth_disabled=True, **overrides)
        servers.append(LiveServer(settings, slow_llm).start())
        return servers[-1]

    yield started
    for server in servers:
        server.stop()


def add(server: LiveServer, user: str, project_key: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {project_key}"} if project_key else {}
    body = {"user_id": user, "input": {"string": {"content": [f"{user} likes tea"]}}}
    return httpx.post(f"{server.url}/v1/memories", json=body, headers=headers, timeout=30)


def count_runs(server: LiveServer) -> int:
    async def count() -> int:
        assert server.engine is not None
        async with server.engine.db.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(runs))).scalar_one())

    return server.run(count())


def refused_with(response: httpx.Response, status: int, setting: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert int(response.headers["retry-after"]) >= 1
    assert setting in response.json()["detail"]


def test_a_project_over_its_open_run_quota_gets_429(start: Any) -> None:
    server = start(project_max_open_runs=3)
    assert [add(server, f"u{i}").status_code for i in range(3)] == [200, 200, 200]
    refused_with(add(server, "u9"), 429, "MNEMO_PROJECT_MAX_OPEN_RUNS")
    assert count_runs(server) == 3  # nothing of the refused add remains


def test_a_project_over_its_add_rate_gets_429(start: Any) -> None:
    # One token per 100 s: a slow machine's adds cannot earn the third one back in time.
    server = start(project_adds_per_second=0.01, project_add_burst=2)
    assert [add(server, f"u{i}").status_code for i in range(2)] == [200, 200]
    refused = add(server, "u3")
    refused_with(refused, 429, "MNEMO_PROJECT_ADDS_PER_SECOND")
    assert 90 <= int(refused.headers["retry-after"]) <= 100  # the time to the next token
    assert count_runs(server) == 2


def test_a_full_pipeline_queue_gets_503_for_everyone(start: Any) -> None:
    server = start(max_open_runs=2)
    assert [add(server, f"u{i}").status_code for i in range(2)] == [200, 200]
    refused_with(add(server, "u3"), 503, "MNEMO_MAX_OPEN_RUNS")
    assert count_runs(server) == 2


def test_requests_beyond_the_in_flight_limit_get_503_and_probes_still_answer(start: Any) -> None:
    server = start(max_inflight_requests=2)
    address = httpx.URL(server.url)
    # Two adds whose bodies are still arriving hold both slots (long-lived waits would
    # not: they have a pool of their own, tests/api/test_slow_clients.py).
    holders = [socket.create_connection((address.host, address.port)) for _ in range(2)]
    try:
        for holder in holders:
            holder.sendall(
                b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
        for _ in range(100):
            response = add(server, "u2")
            if response.status_code == 503:
                break
            time.sleep(0.05)  # the held adds have not arrived yet
        refused_with(response, 503, "MNEMO_MAX_INFLIGHT_REQUESTS")
        assert httpx.get(f"{server.url}/healthz").status_code == 200
        assert httpx.get(f"{server.url}/readyz").status_code == 200
    finally:
        for holder in holders:
            holder.close()
