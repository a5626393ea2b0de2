"""Property filters narrow only the topics scoped by them, over HTTP, in every retrieval mode
and in list; a memory records only its topic's scope properties.

Engram: search and list `properties` "narrow results for topics scoped by passed
properties"; a per-topic filter key with a value, on a topic not scoped by it, is a 400.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration

MODES = ("vector", "bm25", "hybrid", "fetch", "list")
QUERY = "small commits make test release"


def _commit(http: httpx.Client, user: str, properties: dict[str, str], *items: tuple) -> None:
    body = {
        "user_id": user,
        "properties": properties,
        "input": {"pre_extracted": {"items": [{"topic": t, "content": c} for t, c in items]}},
    }
    added = http.post("/v1/memories", json=body)
    assert added.status_code == 200, added.text
    run = http.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run


@pytest.fixture
def quickstart(http: httpx.Client, tenant: Tenant) -> str:
    """A default group in the plugin's layout, with memories made in two repositories."""
    made = http.put("/v1/groups/default", json={"template": "engram_quickstart"})
    assert made.status_code == 200, made.text
    _commit(
        http,
        tenant.user,
        {"repo_name": "acme/api", "session_id": "s1", "editor": "vim"},
        ("DeveloperPreferences", "Prefers small commits and type hints."),
        ("Processes", "In acme/api the tests run with make test."),
    )
    _commit(
        http,
        tenant.user,
        {"repo_name": "acme/web", "session_id": "s2", "editor": "vim"},
        ("Processes", "In acme/web a release is cut with make release."),
    )
    return tenant.user


def _find(http: httpx.Client, mode: str, **body: Any) -> httpx.Response:
    if mode == "list":
        return http.post("/v1/memories/list", json={"limit": 100, **body})
    return http.post(
        "/v1/memories/search",
        json={"query": QUERY, "retrieval_config": {"retrieval_type": mode, "limit": 100}, **body},
    )


def _contents(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return sorted(m["content"] for m in response.json()["memories"])


@pytest.mark.parametrize("mode", MODES)
def test_a_property_filter_leaves_topics_it_does_not_scope(
    http: httpx.Client, quickstart: str, mode: str
) -> None:
    in_web = _find(http, mode, user_id=quickstart, properties={"repo_name": "acme/web"})
    # The preference was stored while in acme/api; DeveloperPreferences is not scoped by
    # repo_name, so recall in acme/web still finds it. Processes are narrowed to acme/web.
    assert _contents(in_web) == [
        "In acme/web a release is cut with make release.",
        "Prefers small commits and type hints.",
    ]
    unknown_key = _find(http, mode, user_id=quickstart, properties={"ticket": "T-1"})
    assert len(_contents(unknown_key)) == 3  # a key no topic is scoped by narrows nothing


@pytest.mark.parametrize("mode", MODES)
def test_per_topic_filters(http: httpx.Client, quickstart: str, mode: str) -> None:
    cleared = _find(
        http,
        mode,
        user_id=quickstart,
        properties={"repo_name": "acme/web"},
        topics=[
            {"name": "Processes", "properties": {"repo_name": None}},
            {"name": "DeveloperPreferences", "properties": {"repo_name": None}},
        ],
    )
    assert len(_contents(cleared)) == 3  # null clears, and is accepted on any topic
    narrowed = _find(
        http,
        mode,
        user_id=quickstart,
        topics=[{"name": "Processes", "properties": {"repo_name": "acme/api"}}],
    )
    assert _contents(narrowed) == ["In acme/api the tests run with make test."]
    refused = _find(
        http,
        mode,
        user_id=quickstart,
        topics=["Processes", {"name": "DeveloperPreferences", "properties": {"repo_name": "x"}}],
    )
    assert refused.status_code == 400
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert [(e["location"], e["value"]) for e in refused.json()["errors"]] == [
        ("body.topics[1].properties.repo_name", "x")
    ]


def test_a_memory_records_only_its_topic_scope_properties(
    http: httpx.Client, quickstart: str
) -> None:
    listed = _find(http, "list", user_id=quickstart)
    stored = {m["content"]: m.get("properties") for m in listed.json()["memories"]}
    assert stored == {
        "Prefers small commits and type hints.": None,
        "In acme/api the tests run with make test.": {"repo_name": "acme/api"},
        "In acme/web a release is cut with make release.": {"repo_name": "acme/web"},
    }


def test_fetch_returns_bounded_first_then_newest(http: httpx.Client, quickstart: str) -> None:
    fetched = _find(http, "fetch", user_id=quickstart)
    assert [m["content"] for m in fetched.json()["memories"]] == [
        "Prefers small commits and type hints.",
        "In acme/web a release is cut with make release.",
        "In acme/api the tests run with make test.",
    ]
    assert {m["score"] for m in fetched.json()["memories"]} == {1.0}
    limited = http.post(
        "/v1/memories/search",
        json={
            "query": "-",
            "user_id": quickstart,
            "topics": ["Processes"],
            "retrieval_config": {"retrieval_type": "fetch", "limit": 1},
        },
    )
    assert _contents(limited) == ["In acme/web a release is cut with make release."]
