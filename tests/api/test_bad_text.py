"""Text the store cannot hold, and documents nested too deep, over real HTTP.

Each is refused with a 4xx problem document naming the location; none may answer 5xx or
reset the connection (the error handler must not echo what it cannot encode).
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration

SURROGATE = "\\ud800"  # JSON escape of a lone (unpaired) UTF-16 surrogate


def _post_raw(tenant: Tenant, path: str, raw: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {tenant.key}", "content-type": "application/json"}
    return httpx.post(f"{tenant.url}{path}", content=raw.encode(), headers=headers, timeout=30)


def _problem(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = json.loads(response.content.decode("utf-8"))  # strict UTF-8: nothing unencodable
    assert problem["status"] == status
    return problem


def _locations(problem: dict) -> list[str]:
    return [e["location"] for e in problem["errors"]]


def test_lone_surrogate_in_content(tenant: Tenant) -> None:
    raw = '{"user_id": "u1", "input": {"string": {"content": ["fine", "bad ' + SURROGATE + ' x"]}}}'
    problem = _problem(_post_raw(tenant, "/v1/memories", raw), 400)
    assert _locations(problem) == ["body.input.string.content[1]"]
    assert "surrogate" in problem["errors"][0]["message"]


def test_lone_surrogate_in_pre_extracted_item(tenant: Tenant) -> None:
    raw = (
        '{"user_id": "u1", "input": {"pre_extracted": {"items": ['
        '{"topic": "UserKnowledge", "content": "\\udfff"}]}}}'
    )
    problem = _problem(_post_raw(tenant, "/v1/memories", raw), 400)
    assert _locations(problem) == ["body.input.pre_extracted.items[0].content"]


@pytest.mark.parametrize("path", ["/v1/memories", "/v1/memories/search", "/v1/memories/list"])
def test_lone_surrogate_in_user_id(tenant: Tenant, path: str) -> None:
    body = {
        "/v1/memories": '"input": {"string": {"content": ["hi"]}}',
        "/v1/memories/search": '"query": "hi"',
        "/v1/memories/list": '"limit": 5',
    }[path]
    raw = "{" + body + ', "user_id": "ann' + SURROGATE + '"}'
    problem = _problem(_post_raw(tenant, path, raw), 400)
    assert _locations(problem) == ["body.user_id"]
    # The echoed value, if any, is escaped text, never the raw surrogate.
    value = problem["errors"][0].get("value")
    assert value is None or "\\ud800" in value


def test_lone_surrogate_in_property_key(tenant: Tenant) -> None:
    raw = '{"query": "hi", "user_id": "u", "properties": {"k' + SURROGATE + '": "v"}}'
    problem = _problem(_post_raw(tenant, "/v1/memories/search", raw), 400)
    assert _locations(problem) == ["body.properties"]


def test_invalid_utf8_in_query_and_path(tenant: Tenant) -> None:
    headers = {"Authorization": f"Bearer {tenant.key}"}
    got = httpx.get(f"{tenant.url}/v1/memories/abc?user_id=ann%ED%A0%80", headers=headers)
    assert _locations(_problem(got, 400)) == ["query.user_id"]
    erased = httpx.delete(f"{tenant.url}/v1/users/ann%FF", headers=headers)
    assert _locations(_problem(erased, 400)) == ["path.user_id"]


def test_invalid_utf8_body_is_400(tenant: Tenant) -> None:
    headers = {"Authorization": f"Bearer {tenant.key}", "content-type": "application/json"}
    raw = b'{"user_id": "u", "input": {"string": {"content": ["caf\xe9"]}}}'
    response = httpx.post(f"{tenant.url}/v1/memories", content=raw, headers=headers)
    _problem(response, 400)


@pytest.mark.parametrize("depth", [65, 500, 900, 5000])
@pytest.mark.parametrize("shape", ["object", "array"])
def test_deep_nesting_is_refused_without_5xx(tenant: Tenant, depth: int, shape: str) -> None:
    opener, closer = ('{"a":', "}") if shape == "object" else ("[", "]")
    nested = opener * depth + "1" + closer * depth
    raw = (
        '{"user_id": "u", "input": {"conversation": {"messages": '
        '[{"role": "user", "content": "hi"}], "metadata": {"deep": ' + nested + "}}}}"
    )
    problem = _problem(_post_raw(tenant, "/v1/memories", raw), 400)
    assert "nest" in problem["detail"]


def test_nesting_within_the_cap_is_accepted(tenant: Tenant) -> None:
    nested = '{"a":' * 40 + "1" + "}" * 40
    raw = (
        '{"user_id": "u", "input": {"conversation": {"messages": '
        '[{"role": "user", "content": "hi"}], "metadata": {"deep": ' + nested + "}}}}"
    )
    assert _post_raw(tenant, "/v1/memories", raw).status_code == 200


def test_lone_surrogate_in_group_document(tenant: Tenant) -> None:
    raw = (
        '{"topics": [{"name": "Notes", "description": "bad ' + SURROGATE + '"}],'
        '"pipeline": {"steps": [{"id": "c", "kind": "commit", "input_type": "pre_extracted"}]}}'
    )
    headers = {"Authorization": f"Bearer {tenant.key}", "content-type": "application/json"}
    response = httpx.put(f"{tenant.url}/v1/groups/notes", content=raw.encode(), headers=headers)
    assert _locations(_problem(response, 400)) == ["body.topics[0].description"]


def test_nul_is_located(tenant: Tenant) -> None:
    raw = '{"user_id": "u1", "input": {"string": {"content": ["ok", "a\\u0000b"]}}}'
    problem = _problem(_post_raw(tenant, "/v1/memories", raw), 400)
    assert _locations(problem) == ["body.input.string.content[1]"]
    headers = {"Authorization": f"Bearer {tenant.key}"}
    got = httpx.get(f"{tenant.url}/v1/memories/abc?user_id=a%00b", headers=headers)
    assert _locations(_problem(got, 400)) == ["query.user_id"]
