"""User ids compare after NFKC and case folding; ids holding a character Unicode folds onto
another one (KELVIN SIGN, fullwidth letters, ligatures) are refused with 422."""

from __future__ import annotations

import uuid

import httpx
import pytest

pytestmark = pytest.mark.integration


def _remember(http: httpx.Client, user: str, fact: str) -> str:
    body = {
        "user_id": user,
        "input": {"pre_extracted": {"items": [{"topic": "UserKnowledge", "content": fact}]}},
    }
    added = http.post("/v1/memories", json=body)
    assert added.status_code == 200, added.text
    run = http.get(f"/v1/runs/{added.json()['run_id']}", params={"wait": 30}).json()
    assert run["status"] == "completed", run
    return run["committed_operations"]["created"][0]["memory_id"]


def _listed(http: httpx.Client, user: str) -> list[str]:
    response = http.post("/v1/memories/list", json={"user_id": user})
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()["memories"]]


def _refused_422(response: httpx.Response, location: str) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["location"] == location


@pytest.mark.parametrize(
    "impostor",
    [
        "\u212aate",  # KELVIN SIGN, lower-cases to "k"
        "\uff4bate",  # FULLWIDTH LATIN SMALL LETTER K
        "k\u0430te",  # CYRILLIC a: NFKC keeps it: simply another user
    ],
)
def test_confusable_ids_never_read_kates_memories(http: httpx.Client, impostor: str) -> None:
    kate = f"kate-{uuid.uuid4().hex[:6]}"
    memory_id = _remember(http, kate, "User's PIN is 4921.")
    suffix = kate[4:]
    other = impostor + suffix
    listed = http.post("/v1/memories/list", json={"user_id": other})
    if listed.status_code == 200:
        assert memory_id not in [m["id"] for m in listed.json()["memories"]]
    else:
        _refused_422(listed, "body.user_id")
    got = http.get(f"/v1/memories/{memory_id}", params={"user_id": other})
    assert got.status_code in (404, 422)


@pytest.mark.parametrize("impostor", ["\u212aate", "\uff4bate", "\ufb01ona", "x\u2075"])
def test_compatibility_forms_are_refused_everywhere(http: httpx.Client, impostor: str) -> None:
    add = {"user_id": impostor, "input": {"string": {"content": ["hi"]}}}
    _refused_422(http.post("/v1/memories", json=add), "body.user_id")
    _refused_422(
        http.post("/v1/memories/search", json={"query": "x", "user_id": impostor}), "body.user_id"
    )
    _refused_422(http.post("/v1/memories/list", json={"user_id": impostor}), "body.user_id")
    _refused_422(http.get("/v1/memories/m1", params={"user_id": impostor}), "query.user_id")
    _refused_422(http.delete("/v1/memories/m1", params={"user_id": impostor}), "query.user_id")
    _refused_422(http.delete(f"/v1/users/{impostor}"), "path.user_id")


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("stra\u00dfe", "STRASSE"),  # sharp s folds to "ss"
        ("jos\u00e9", "JOSE\u0301"),  # precomposed and decomposed e-acute
        (
            "\u03c3\u03bf\u03c6\u03b9\u03b1\u03c2",
            "\u03a3\u039f\u03a6\u0399\u0391\u03a3",
        ),  # final sigma
        ("Ann", "aNN"),
    ],
)
def test_case_and_canonical_variants_are_one_user(
    http: httpx.Client, stored: str, asked: str
) -> None:
    tag = uuid.uuid4().hex[:6]
    memory_id = _remember(http, tag + stored, "User rows a boat.")
    assert _listed(http, f"  {tag.upper()}{asked} ") == [memory_id]
    got = http.get(f"/v1/memories/{memory_id}", params={"user_id": tag + asked})
    assert got.status_code == 200, got.text
