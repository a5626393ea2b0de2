"""`retrieval_config.min_score` (extension): a query-independent floor on the vector
similarity, (cos + 1) / 2, in vector and hybrid modes; it drops hits and never reorders them."""

from __future__ import annotations

import httpx
import pytest

from mnemo.client import HybridRetrieval, MnemoClient
from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration
TEXTS = ("I keep bees on the roof", "I sail on weekends", "I read old maps")


@pytest.fixture
def stored(http: httpx.Client, tenant: Tenant) -> list[str]:
    contents = []
    for text in TEXTS:
        run = http.post(
            "/v1/memories", json={"user_id": tenant.user, "input": {"string": {"content": [text]}}}
        ).json()
        done = http.get(f"/v1/runs/{run['run_id']}", params={"wait": 30}).json()
        assert done["status"] == "completed"
    for memory in http.post("/v1/memories/list", json={"user_id": tenant.user}).json()["memories"]:
        contents.append(memory["content"])
    return contents


def _search(
    http: httpx.Client, tenant: Tenant, query: str, config: dict[str, object]
) -> httpx.Response:
    return http.post(
        "/v1/memories/search",
        json={"user_id": tenant.user, "query": query, "retrieval_config": config},
    )


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_min_score_keeps_only_close_hits_in_their_order(
    http: httpx.Client, tenant: Tenant, stored: list[str], mode: str
) -> None:
    query = stored[0]  # a memory's own text: similarity 1.0 (the test embedder hashes words)
    everything = _search(http, tenant, query, {"retrieval_type": mode}).json()["memories"]
    assert len(everything) == len(stored)
    vector = _search(http, tenant, query, {"retrieval_type": "vector"}).json()["memories"]
    similarity = {m["id"]: m["score"] for m in vector}
    floor = sorted(similarity.values())[-2] + 1e-6  # above all but the best
    kept = _search(http, tenant, query, {"retrieval_type": mode, "min_score": floor})
    assert kept.status_code == 200
    ids = [m["id"] for m in kept.json()["memories"]]
    assert ids == [m["id"] for m in everything if similarity[m["id"]] >= floor]
    assert len(ids) == 1 and kept.json()["memories"][0]["content"] == query
    with MnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        sdk = client.memories.search(
            query, user_id=tenant.user, retrieval_config=HybridRetrieval(min_score=floor)
        )
    assert [m.id for m in sdk] == ids


@pytest.mark.parametrize("mode", ["bm25", "fetch"])
def test_min_score_is_refused_where_there_is_no_vector_score(
    http: httpx.Client, tenant: Tenant, mode: str
) -> None:
    refused = _search(http, tenant, "bees", {"retrieval_type": mode, "min_score": 0.5})
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["location"].startswith("body.retrieval_config")
    assert "min_score" in refused.text
