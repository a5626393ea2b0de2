"""The recall signals through HTTP: a time the query names lifts the memories dated in it, in
every retrieval mode. Both transports search through `core.Engine.search` (the gateway of the
distributed mode calls the same engine method), so the embedded server stands for both."""

from __future__ import annotations

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration

# Memories of spread lengths, so the lists' scores spread; the dated one sits mid-pool.
FILLERS = (
    ("I went hiking", "2024-03-10T10:00:00Z"),
    ("I went hiking in the hills", "2024-04-02T10:00:00Z"),
    ("I went hiking in the hills with my old dog", "2025-01-05T10:00:00Z"),
    ("I went hiking in the hills with my old dog and two friends", "2025-06-20T10:00:00Z"),
    (
        "I went hiking in the hills with my old dog and two friends from work on a cold day",
        "2022-09-01T10:00:00Z",
    ),
)
DATED = ("I went hiking by the lake shore on foot", "2023-07-15T10:00:00Z")


def _add(http: httpx.Client, user: str, text: str, at: str) -> None:
    said = {"content": [text], "created_at": at}
    run = http.post("/v1/memories", json={"user_id": user, "input": {"string": said}}).json()
    done = http.get(f"/v1/runs/{run['run_id']}", params={"wait": 30}).json()
    assert done["status"] == "completed"


def _rank(http: httpx.Client, user: str, query: str, mode: str) -> int:
    found = http.post(
        "/v1/memories/search",
        json={"user_id": user, "query": query, "retrieval_config": {"retrieval_type": mode}},
    ).json()["memories"]
    contents = [m["content"] for m in found]
    assert len(contents) == len(FILLERS) + 1
    scores = [m["score"] for m in found]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    return next(n for n, c in enumerate(contents) if DATED[0] in c)


@pytest.mark.parametrize("mode", ["vector", "bm25", "hybrid"])
def test_a_named_month_lifts_the_memory_dated_in_it(
    http: httpx.Client, tenant: Tenant, mode: str
) -> None:
    for text, at in (*FILLERS, DATED):
        _add(http, tenant.user, text, at)
    # Same words, a month no memory is dated in: only the window differs.
    elsewhere = _rank(http, tenant.user, "Where did I go hiking in March 2021?", mode)
    inside = _rank(http, tenant.user, "Where did I go hiking in July 2023?", mode)
    assert elsewhere > 0
    assert inside < elsewhere
