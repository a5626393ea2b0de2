"""/readyz: 503 with the failing check named while no pipeline worker is alive; the age of
the oldest running run is reported but never fails readiness."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture
def slow_llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(echo=True, delay_seconds=30.0) as server:
        yield server


def serve(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path, **kw: object
) -> LiveServer:
    settings = gateway_settings(postgres.new_database(), tmp_path, auth_disabled=True)
    return LiveServer(settings, llm, **kw).start()  # type: ignore[arg-type]


def test_without_a_live_worker_readyz_is_503_and_names_the_workers(
    postgres: EmbeddedPostgres, slow_llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    server = serve(postgres, slow_llm, tmp_path, run_workers=False)
    try:
        ready = httpx.get(f"{server.url}/readyz")
        assert ready.status_code == 503
        assert ready.headers["content-type"] == "application/problem+json"
        assert int(ready.headers["retry-after"]) > 0
        problem = ready.json()
        assert [e["location"] for e in problem["errors"]] == ["workers"]
        assert "no live heartbeat from: embedded" in problem["detail"]
        assert problem["workers"] == []
        assert httpx.get(f"{server.url}/healthz").status_code == 200  # alive all the same
    finally:
        server.stop()


def test_the_oldest_running_run_is_reported_and_readiness_holds(
    postgres: EmbeddedPostgres, slow_llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    server = serve(postgres, slow_llm, tmp_path)
    try:
        idle = httpx.get(f"{server.url}/readyz").json()
        assert idle["oldest_running_run_age_seconds"] is None
        body = {"user_id": "u1", "input": {"string": {"content": ["I like tea"]}}}
        assert httpx.post(f"{server.url}/v1/memories", json=body).status_code == 200
        time.sleep(1.0)  # the run waits on the slow LLM
        ready = httpx.get(f"{server.url}/readyz")
        assert ready.status_code == 200
        assert ready.json()["oldest_running_run_age_seconds"] >= 1.0
    finally:
        server.stop()
