"""The Idempotency-Key header of POST /v1/memories over HTTP, across a gateway restart too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from mnemo.client import ConflictError, MnemoClient
from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def _add(user: str, text: str) -> dict[str, Any]:
    return {"user_id": user, "input": {"string": {"content": [text]}}}


def test_a_repeat_answers_with_the_first_run_and_says_so(
    http: httpx.Client, tenant: Tenant
) -> None:
    headers = {"Idempotency-Key": "hook-turn-17"}
    first = http.post("/v1/memories", json=_add(tenant.user, "I keep bees"), headers=headers)
    assert first.status_code == 200, first.text
    assert "Idempotent-Replayed" not in first.headers
    run_id = first.json()["run_id"]
    assert http.get(f"/v1/runs/{run_id}", params={"wait": 30}).json()["status"] == "completed"
    again = http.post("/v1/memories", json=_add(tenant.user, "I keep bees"), headers=headers)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == {"run_id": run_id, "status": "completed"}
    listed = http.post("/v1/memories/list", json={"user_id": tenant.user}).json()
    assert [m["content"] for m in listed["memories"]] == ["User said: I keep bees"]


def test_another_body_under_the_key_is_a_409_problem(http: httpx.Client, tenant: Tenant) -> None:
    headers = {"Idempotency-Key": "k-409"}
    assert http.post("/v1/memories", json=_add(tenant.user, "one"), headers=headers).is_success
    refused = http.post("/v1/memories", json=_add(tenant.user, "two"), headers=headers)
    assert refused.status_code == 409
    assert refused.headers["content-type"] == "application/problem+json"
    problem = refused.json()
    assert problem["status"] == 409 and "Idempotency-Key 'k-409'" in problem["detail"]
    assert problem["errors"][0]["location"] == "header.Idempotency-Key"


def test_the_sdk_sends_the_key_and_raises_conflict(tenant: Tenant) -> None:
    with MnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        first = client.memories.add("I keep bees", user_id=tenant.user, idempotency_key="sdk-1")
        again = client.memories.add("I keep bees", user_id=tenant.user, idempotency_key="sdk-1")
        assert again.run_id == first.run_id
        with pytest.raises(ConflictError):
            client.memories.add("I keep wasps", user_id=tenant.user, idempotency_key="sdk-1")


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9"])
def test_a_malformed_key_is_refused_and_nothing_is_stored(
    http: httpx.Client, tenant: Tenant, key: str
) -> None:
    refused = http.post(
        "/v1/memories",
        json=_add(tenant.user, "I keep bees"),
        headers={"Idempotency-Key": key.encode("utf-8")},  # type: ignore[dict-item]
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["errors"][0]["location"] == "header.Idempotency-Key"
    listed = http.post("/v1/memories/list", json={"user_id": tenant.user}).json()
    assert listed["total"] == 0


def test_a_repeat_after_a_gateway_restart_returns_the_same_run(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    settings = gateway_settings(postgres.new_database("restart"), tmp_path)
    body = _add("ana", "I keep bees")
    headers = {"Idempotency-Key": "before-restart"}
    runs = []
    for _ in range(2):
        server = LiveServer(settings, llm_server).start()
        try:
            key = server.create_key("p")
            with httpx.Client(base_url=server.url, timeout=30) as http:
                answer = http.post(
                    "/v1/memories",
                    json=body,
                    headers={**headers, "Authorization": f"Bearer {key}"},
                )
            assert answer.status_code == 200, answer.text
            runs.append(answer.json()["run_id"])
        finally:
            server.stop()
    assert runs[0] == runs[1]
