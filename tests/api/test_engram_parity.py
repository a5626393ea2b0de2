"""Engram's v1 surface, field by field against its newest public spec (weaviate/docs:
static/specs/engram-openapi.json): what Engram's SDK and plugins send, mnemo accepts, and
what they read, mnemo answers."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.integration

TOPIC_FIELDS = {"topic_name", "description", "is_bounded", "scoping"}


def test_groups_list_every_spec_field(http: httpx.Client) -> None:
    groups = http.get("/v1/groups").json()["groups"]
    [default] = [g for g in groups if g["name"] == "default"]
    assert set(default) == {"group_id", "name", "topics"} and default["group_id"]
    for topic in default["topics"]:
        assert set(topic) == TOPIC_FIELDS
        assert set(topic["scoping"]) == {"user_scoped", "scope_properties"}


def test_a_group_by_name_is_the_group_the_list_shows(http: httpx.Client) -> None:
    listed = [g for g in http.get("/v1/groups").json()["groups"] if g["name"] == "default"]
    found = http.get("/v1/groups/by-name", params={"name": "default"})
    assert found.status_code == 200, found.text
    assert [found.json()] == listed
    unknown = http.get("/v1/groups/by-name", params={"name": "nope"})
    assert unknown.status_code in (404, 422)
    assert unknown.headers["content-type"].startswith("application/problem+json")
    assert "nope" in unknown.json()["detail"]


def test_search_results_are_wrapped_only_for_the_releases_that_read_body(
    http: httpx.Client,
) -> None:
    body = {"user_id": "u3", "input": {"pre_extracted": {"items": [
        {"topic": "UserKnowledge", "content": "u3 plays the cello."}]}}}  # fmt: skip
    run_id = http.post("/v1/memories", json=body).json()["run_id"]
    assert http.get(f"/v1/runs/{run_id}", params={"wait": 30}).json()["status"] == "completed"
    search = {"query": "cello", "user_id": "u3"}
    old = http.post("/v1/memories/search", json=search,
                    headers={"User-Agent": "weaviate-engram/0.1.0"}).json()  # fmt: skip
    assert [m["Body"]["content"] for m in old["memories"]] == ["u3 plays the cello."]
    assert old["total"] == 1
    for headers in ({"User-Agent": "weaviate-engram/0.5.0"},
                    {"X-Engram-Client": "python-sdk/1.0.1"}):  # fmt: skip
        current = http.post("/v1/memories/search", json=search, headers=headers).json()
        assert [m["content"] for m in current["memories"]] == ["u3 plays the cello."]


def test_the_engram_client_header_is_accepted(http: httpx.Client) -> None:
    listed = http.post("/v1/memories/list", json={"user_id": "u1"},
                       headers={"X-Engram-Client": "engram-python/0.1.0"})  # fmt: skip
    assert listed.status_code == 200, listed.text


@pytest.mark.parametrize(
    ("body", "named"),
    [({"group": "marketing", "user_id": "u1"}, "marketing"),
     ({"topics": ["userknowledge"], "user_id": "u1"}, "userknowledge")],
)  # fmt: skip
def test_an_unknown_group_or_topic_is_a_422_naming_it(
    http: httpx.Client, body: dict[str, object], named: str
) -> None:
    for path, extra in (("/v1/memories/list", {}), ("/v1/memories/search", {"query": "x"})):
        answer = http.post(path, json={**body, **extra})
        assert answer.status_code == 422, answer.text
        assert named in answer.json()["detail"] or named in answer.text


def test_a_run_shows_group_id_starting_step_and_input_type_and_root_is_accepted(
    http: httpx.Client,
) -> None:
    body = {"user_id": "u1", "root": "pre_extracted",
            "input": {"pre_extracted": {"items": [{"topic": "UserKnowledge",
                                                   "content": "u1 sails."}]}}}  # fmt: skip
    added = http.post("/v1/memories", json=body)
    assert added.status_code == 200, added.text
    assert added.json()["status"] in ("running", "completed", "in_buffer")
    run = http.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
    assert {"run_id", "status", "group_id", "starting_step", "input_type", "created_at",
            "updated_at"} <= set(run)  # fmt: skip
    assert isinstance(run["starting_step"], int) and run["input_type"] == "pre_extracted"
    assert run["status"] in ("running", "completed", "failed", "in_buffer")


def test_string_input_keeps_its_created_and_updated_times(http: httpx.Client) -> None:
    body = {"user_id": "u7", "input": {"string": {
        "content": ["u7 keeps bees in the garden."],
        "created_at": "2024-02-03T04:05:06Z", "updated_at": "2024-02-04T04:05:06Z"}}}  # fmt: skip
    added = http.post("/v1/memories", json=body)
    assert added.status_code == 200, added.text
    run = http.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run
    memories = http.post("/v1/memories/list", json={"user_id": "u7"}).json()["memories"]
    assert memories, "the string input made no memory"
    # mnemo keeps the input's times as the memory's event time (when it happened); its
    # system times say when this mnemo stored it.
    assert all(m["event_time"].startswith("2024-02-03") for m in memories), memories


def test_a_get_or_delete_naming_an_unknown_user_is_a_422(http: httpx.Client) -> None:
    """Engram's api-overview: 422 for "an unknown user_id on a get or delete", 404 for a
    memory that "does not exist in this project". A user is known from their first add."""
    body = {"user_id": "known", "input": {"pre_extracted": {"items": [
        {"topic": "UserKnowledge", "content": "known sails."}]}}}  # fmt: skip
    run_id = http.post("/v1/memories", json=body).json()["run_id"]
    assert http.get(f"/v1/runs/{run_id}", params={"wait": 30}).json()["status"] == "completed"
    for method in ("GET", "DELETE"):
        unknown = http.request(method, "/v1/memories/no-such-id", params={"user_id": "stranger"})
        assert unknown.status_code == 422, unknown.text
        assert unknown.json()["errors"][0]["location"] == "query.user_id"
        # A user the project knows, with a memory it does not have: still a 404.
        missing = http.request(method, "/v1/memories/no-such-id", params={"user_id": "KNOWN"})
        assert missing.status_code == 404, missing.text
