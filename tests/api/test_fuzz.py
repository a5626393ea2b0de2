"""Property-based fuzzing of every operation in /openapi.json: no input may cause a 5xx.

Bounded: a few dozen examples per operation, against the live gateway, with a valid key
for a project of its own.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from mnemo.gateway.app import create_app
from mnemo.settings import Settings
from tests.api.live_server import LiveServer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def fuzz_key(live_server: LiveServer) -> str:
    return live_server.create_key(f"fuzz-{uuid.uuid4().hex[:8]}")


# The same document the live server serves at /openapi.json (checked below); built from the
# app so that tests can be generated at collection time, before the server exists.
OPENAPI = create_app(Settings(embedding_provider="hash")).openapi()
schema = schemathesis.openapi.from_dict(OPENAPI)


def test_served_schema_is_the_fuzzed_one(live_server: LiveServer) -> None:
    assert httpx.get(f"{live_server.url}/openapi.json").json() == OPENAPI


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case, live_server: LiveServer, fuzz_key: str) -> None:
    response = case.call(
        base_url=live_server.url, headers={"Authorization": f"Bearer {fuzz_key}"}, timeout=70
    )
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:500]}"
    )
    if response.status_code >= 400:
        content_type = response.headers.get("content-type") or [""]  # header lists
        assert content_type[0].startswith("application/problem+json"), content_type
