"""`PUT /v1/groups/{name}` with If-Match: a stale tag is refused (412), nothing is stored."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.integration


def test_get_gives_an_etag_and_a_put_with_a_stale_if_match_is_refused(
    http: httpx.Client,
) -> None:
    http.put("/v1/groups/notes", json={"template": "default"}).raise_for_status()
    read = http.get("/v1/groups/notes")
    tag = read.headers["ETag"]
    assert tag.startswith('"') and tag.endswith('"')
    assert http.get("/v1/groups/notes").headers["ETag"] == tag  # stable while unchanged

    retained = {"template": "default", "retention": {"raw_input_days": 30}}
    first = http.put("/v1/groups/notes", json=retained, headers={"If-Match": tag})
    assert first.status_code == 200, first.text
    new_tag = first.headers["ETag"]
    assert new_tag != tag and http.get("/v1/groups/notes").headers["ETag"] == new_tag

    stale = http.put(
        "/v1/groups/notes",
        json={"template": "personalization"},
        headers={"If-Match": tag},
    )
    assert stale.status_code == 412
    assert stale.headers["content-type"] == "application/problem+json"
    problem = stale.json()
    assert problem["status"] == 412 and "was changed since it was read" in problem["detail"]
    assert problem["errors"][0]["location"] == "header.If-Match"
    stored = http.get("/v1/groups/notes").json()
    assert stored["template"] == "default" and stored["retention"]["raw_input_days"] == 30


def test_if_match_star_and_lists_and_a_missing_group(http: httpx.Client) -> None:
    missing = http.put("/v1/groups/fresh", json={"template": "default"}, headers={"If-Match": "*"})
    assert missing.status_code == 412 and "does not exist" in missing.json()["detail"]
    assert http.get("/v1/groups/fresh").status_code == 404
    http.put("/v1/groups/fresh", json={"template": "default"}).raise_for_status()
    star = http.put("/v1/groups/fresh", json={"template": "default"}, headers={"If-Match": "*"})
    assert star.status_code == 200
    tag = star.headers["ETag"]
    listed = http.put(
        "/v1/groups/fresh", json={"template": "default"}, headers={"If-Match": f'"nope", {tag}'}
    )
    assert listed.status_code == 200


def test_without_if_match_the_last_write_wins_as_engram_clients_expect(
    http: httpx.Client,
) -> None:
    http.put("/v1/groups/plain", json={"template": "default"}).raise_for_status()
    http.put("/v1/groups/plain", json={"template": "personalization"}).raise_for_status()
    assert http.get("/v1/groups/plain").json()["template"] == "personalization"
