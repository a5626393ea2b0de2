"""Cursor paging of POST /v1/memories/list on the wire, through the SDK too."""

from __future__ import annotations

import httpx
import pytest

from mnemo.client import MnemoClient
from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration


def test_next_cursor_pages_through_every_memory(http: httpx.Client, tenant: Tenant) -> None:
    for text in ("I keep bees", "I sail", "I read maps"):
        run = http.post(
            "/v1/memories", json={"user_id": tenant.user, "input": {"string": {"content": [text]}}}
        ).json()
        assert http.get(f"/v1/runs/{run['run_id']}", params={"wait": 30}).json()["status"] == (
            "completed"
        )
    first = http.post("/v1/memories/list", json={"user_id": tenant.user, "limit": 2}).json()
    assert first["total"] == 3 and len(first["memories"]) == 2
    cursor = first["next_cursor"]
    second = http.post(
        "/v1/memories/list", json={"user_id": tenant.user, "limit": 2, "cursor": cursor}
    ).json()
    assert "next_cursor" not in second and len(second["memories"]) == 1
    ids = [m["id"] for m in first["memories"] + second["memories"]]
    assert len(set(ids)) == 3
    refused = http.post("/v1/memories/list", json={"user_id": tenant.user, "cursor": "!!"})
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["location"] == "body.cursor"
    with MnemoClient(base_url=tenant.url, api_key=tenant.key) as client:
        page = client.memories.list(user_id=tenant.user, limit=2)
        rest = client.memories.list(user_id=tenant.user, limit=2, cursor=page.next_cursor)
    assert [m.id for m in [*page, *rest]] == ids and rest.next_cursor is None
