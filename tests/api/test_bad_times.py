"""Times and vectors no stored value may break (issue 33, failure 1): instants that leave
Python's or a day's range in some offset, event times in the far future, NaN vectors. Each
is refused at entry with a located 422 and nothing is stored; the user's reads still work."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration

# Both are valid RFC 3339 and both leave Python's datetime when turned into UTC.
PAST_THE_END = "9999-12-31T23:59:59-23:59"
BEFORE_THE_START = "0001-01-01T00:00:00+23:59"


def _add(http: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    return http.post("/v1/memories", json=body)


def _one_memory(http: httpx.Client, tenant: Tenant) -> tuple[dict[str, Any], dict[str, Any]]:
    """A memory of this tenant as its export line, and the export's header."""
    said = {"content": ["I keep bees"], "created_at": "2025-05-01T10:00:00Z"}
    response = _add(http, {"user_id": tenant.user, "input": {"string": said}})
    assert response.status_code == 200, response.text
    run = http.get(f"/v1/runs/{response.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run
    lines = [json.loads(x) for x in http.get("/v1/export").text.splitlines()]
    [memory] = [x for x in lines if x["kind"] == "memory"]
    return memory, lines[0]


def _readable(http: httpx.Client, tenant: Tenant) -> list[str]:
    listed = http.post("/v1/memories/list", json={"user_id": tenant.user})
    assert listed.status_code == 200, listed.text
    found = http.post("/v1/memories/search", json={"query": "bees", "user_id": tenant.user})
    assert found.status_code == 200, found.text
    exported = http.get("/v1/export")
    assert exported.status_code == 200 and exported.text.splitlines()[-1].startswith(
        '{"kind":"end"'
    )
    return [m["content"] for m in listed.json()["memories"]]


def _assert_refused(response: httpx.Response, location: str) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    locations = [e["location"] for e in response.json()["errors"]]
    assert location in locations, locations


@pytest.mark.parametrize("when", [PAST_THE_END, BEFORE_THE_START])
@pytest.mark.parametrize("field", ["event_time", "event_time_end", "created_at", "updated_at"])
def test_an_import_with_an_instant_out_of_range_is_refused(
    http: httpx.Client, tenant: Tenant, when: str, field: str
) -> None:
    memory, header = _one_memory(http, tenant)
    imported = dict(memory, id=memory["id"] + "-x", content="I keep wasps", **{field: when})
    response = http.post(
        "/v1/import", json={"embedding": header["embedding"], "memories": [imported]}
    )
    _assert_refused(response, f"body.memories[0].{field}")
    assert _readable(http, tenant) == [memory["content"]]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_an_import_with_a_vector_that_is_not_finite_is_refused(
    http: httpx.Client, tenant: Tenant, bad: float
) -> None:
    memory, header = _one_memory(http, tenant)
    values = list(
        struct.unpack(f"<{header['embedding']['dim']}f", base64.b64decode(memory["embedding"]))
    )
    values[3] = bad
    vector = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    imported = dict(memory, id=memory["id"] + "-nan", content="I keep wasps", embedding=vector)
    response = http.post(
        "/v1/import", json={"embedding": header["embedding"], "memories": [imported]}
    )
    _assert_refused(response, "body.memories[0].embedding")
    assert _readable(http, tenant) == [memory["content"]]


@pytest.mark.parametrize(
    ("given", "location"),
    [
        ({"string": {"content": ["x"], "created_at": PAST_THE_END}}, "body.input.string.created_at"),
        (
            {"conversation": {"messages": [
                {"role": "user", "content": "hi", "created_at": "2025-01-01T00:00:00Z"},
                {"role": "user", "content": "x", "created_at": BEFORE_THE_START},
            ]}},
            "body.input.conversation.messages[1].created_at",
        ),
        (
            {"pre_extracted": {"items": [{"topic": "UserKnowledge", "content": "x"}],
                               "created_at": PAST_THE_END}},
            "body.input.pre_extracted.created_at",
        ),
        ({"string": {"content": ["x"], "created_at": 1_700_000_000}}, "body.input.string.created_at"),
    ],
)  # fmt: skip
def test_an_add_with_an_event_time_out_of_range_is_refused(
    http: httpx.Client, tenant: Tenant, given: dict[str, Any], location: str
) -> None:
    response = _add(http, {"user_id": tenant.user, "input": given})
    _assert_refused(response, location)
    assert _readable(http, tenant) == []


def test_an_event_time_far_ahead_of_the_clock_is_refused(
    http: httpx.Client, tenant: Tenant
) -> None:
    """A year-9999 event time (in range) would move the scope's event-time watermark to
    9999, and every later add of the user would flush its own buffer."""
    said = {"content": ["x"], "created_at": "9999-06-01T00:00:00Z"}
    response = _add(http, {"user_id": tenant.user, "input": {"string": said}})
    _assert_refused(response, "body.input.string.created_at")
    assert _readable(http, tenant) == []


@pytest.mark.parametrize("when", [PAST_THE_END, BEFORE_THE_START])
@pytest.mark.parametrize("path", ["/v1/memories/search", "/v1/memories/list"])
def test_an_as_of_out_of_range_by_its_offset_is_refused(
    http: httpx.Client, tenant: Tenant, when: str, path: str
) -> None:
    body = {"user_id": tenant.user, "as_of": when} | ({"query": "q"} if "search" in path else {})
    response = http.post(path, json=body)
    _assert_refused(response, "body.as_of")
