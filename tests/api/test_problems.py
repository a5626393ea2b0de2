"""Raw HTTP checks of the error contract: RFC 7807 problem+json with field locations."""

from __future__ import annotations

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration

PROBLEM_KEYS = {"type", "title", "status", "detail", "errors"}


def _post(tenant: Tenant, path: str, **kwargs) -> httpx.Response:
    headers = {"Authorization": f"Bearer {tenant.key}", **kwargs.pop("headers", {})}
    return httpx.post(f"{tenant.url}{path}", headers=headers, timeout=30, **kwargs)


def _problem(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert PROBLEM_KEYS <= set(body) and body["status"] == status
    return body


def test_empty_messages_location(tenant: Tenant) -> None:
    body = _problem(
        _post(
            tenant,
            "/v1/memories",
            json={"input": {"conversation": {"messages": []}}, "user_id": "u"},
        ),
        422,
    )
    assert body["errors"][0]["location"] == "body.input.conversation.messages"


def test_two_input_types(tenant: Tenant) -> None:
    body = _problem(
        _post(
            tenant,
            "/v1/memories",
            json={
                "input": {
                    "string": {"content": ["a"]},
                    "pre_extracted": {"items": [{"content": "b", "topic": "UserKnowledge"}]},
                },
                "user_id": "u",
            },
        ),
        422,
    )
    assert body["errors"][0]["location"] == "body.input"
    assert "exactly one" in body["errors"][0]["message"]


def test_missing_user_id(tenant: Tenant) -> None:
    body = _problem(
        _post(tenant, "/v1/memories", json={"input": {"string": {"content": ["a"]}}}), 400
    )
    assert body["errors"][0]["location"] == "body.user_id"


def test_unknown_pre_extracted_topic(tenant: Tenant) -> None:
    body = _problem(
        _post(
            tenant,
            "/v1/memories",
            json={
                "input": {"pre_extracted": {"items": [{"content": "x", "topic": "Nope"}]}},
                "user_id": "u",
            },
        ),
        400,
    )
    assert body["errors"][0]["location"] == "body.input.pre_extracted.items[0].topic"
    assert body["errors"][0]["value"] == "Nope"


def test_malformed_json(tenant: Tenant) -> None:
    _problem(
        _post(
            tenant,
            "/v1/memories/search",
            content=b"{not json",
            headers={"Content-Type": "application/json"},
        ),
        400,
    )


def test_search_limit_bounds_and_null(tenant: Tenant) -> None:
    body = _problem(
        _post(
            tenant,
            "/v1/memories/search",
            json={
                "query": "x",
                "user_id": "u",
                "retrieval_config": {"retrieval_type": "bm25", "limit": 101},
            },
        ),
        422,
    )
    assert body["errors"][0]["location"] == "body.retrieval_config.limit"
    ok = _post(
        tenant,
        "/v1/memories/search",
        json={
            "query": "x",
            "user_id": "u",
            "group": None,
            "retrieval_config": {"retrieval_type": "hybrid", "limit": None},
        },
    )
    assert ok.status_code == 200 and ok.json() == {"memories": [], "total": 0}
    _problem(_post(tenant, "/v1/memories/search", json={"query": "", "user_id": "u"}), 422)


def test_payload_too_large(tenant: Tenant) -> None:
    big = "x" * (70 * 1024)
    _problem(
        _post(
            tenant, "/v1/memories", json={"input": {"string": {"content": [big]}}, "user_id": "u"}
        ),
        413,
    )


def test_payload_too_large_streamed_without_length(tenant: Tenant) -> None:
    def chunks():
        for _ in range(80):
            yield b"x" * 1024

    _problem(
        _post(
            tenant, "/v1/memories", content=chunks(), headers={"Content-Type": "application/json"}
        ),
        413,
    )


def test_missing_and_bad_keys(tenant: Tenant) -> None:
    missing = httpx.get(f"{tenant.url}/v1/auth/verify")
    _problem(missing, 401)
    assert missing.headers["www-authenticate"] == "Bearer"
    _problem(
        httpx.get(f"{tenant.url}/v1/auth/verify", headers={"Authorization": "Bearer nope"}), 401
    )
    _problem(
        httpx.get(f"{tenant.url}/v1/auth/verify", headers={"Authorization": f"Basic {tenant.key}"}),
        401,
    )
    ok = httpx.get(
        f"{tenant.url}/v1/auth/verify", headers={"Authorization": f"Bearer {tenant.key}"}
    )
    assert ok.status_code == 204


def test_unknown_route_and_method(tenant: Tenant) -> None:
    auth = {"Authorization": f"Bearer {tenant.key}"}
    _problem(httpx.get(f"{tenant.url}/v1/nothing", headers=auth), 404)
    _problem(httpx.patch(f"{tenant.url}/v1/memories/search", headers=auth), 405)
    # Without a key the API answers nothing but 401, not even which routes exist.
    _problem(httpx.get(f"{tenant.url}/v1/nothing"), 401)
