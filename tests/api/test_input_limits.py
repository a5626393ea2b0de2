"""Input limits over real HTTP: refused at admission with 413 or a 422 naming the field.

Default limits (README "Limits and bad input"); the live server caps bodies at 64 KiB.
"""

from __future__ import annotations

import httpx
import pytest

from tests.api.fixtures import Tenant

pytestmark = pytest.mark.integration


def _refused(response: httpx.Response, status: int, location: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert location in [e["location"] for e in problem["errors"]], problem
    return problem


def _items(*contents: str) -> dict:
    return {
        "pre_extracted": {"items": [{"topic": "UserKnowledge", "content": c} for c in contents]}
    }


def _nothing_stored(http: httpx.Client, user: str) -> None:
    listed = http.post("/v1/memories/list", json={"user_id": user})
    assert listed.status_code == 200 and listed.json()["total"] == 0


def test_oversized_memory_is_refused_naming_the_item(http: httpx.Client, tenant: Tenant) -> None:
    body = {"user_id": tenant.user, "input": _items("ok", "ok too", "x " * 20_000, "fine")}
    problem = _refused(
        http.post("/v1/memories", json=body), 422, "body.input.pre_extracted.items[2].content"
    )
    assert "4000" in problem["errors"][0]["message"]
    _nothing_stored(http, tenant.user)


def test_blank_pre_extracted_item_is_refused(http: httpx.Client, tenant: Tenant) -> None:
    body = {"user_id": tenant.user, "input": _items("User likes tea.", "   \n\t ")}
    _refused(http.post("/v1/memories", json=body), 422, "body.input.pre_extracted.items[1].content")
    _nothing_stored(http, tenant.user)


def test_too_many_messages(http: httpx.Client, tenant: Tenant) -> None:
    messages = [{"role": "user", "content": "hi"}] * 501
    body = {"user_id": tenant.user, "input": {"conversation": {"messages": messages}}}
    _refused(http.post("/v1/memories", json=body), 422, "body.input.conversation.messages")


def test_too_many_strings(http: httpx.Client, tenant: Tenant) -> None:
    body = {"user_id": tenant.user, "input": {"string": {"content": ["a"] * 501}}}
    _refused(http.post("/v1/memories", json=body), 422, "body.input.string.content")


def test_too_many_properties_and_long_values(http: httpx.Client, tenant: Tenant) -> None:
    many = {f"k{i}": "v" for i in range(33)}
    body = {"user_id": tenant.user, "input": _items("User likes tea."), "properties": many}
    _refused(http.post("/v1/memories", json=body), 422, "body.properties")
    long_value = {"conversation_id": "v" * 1025}
    search = {"query": "tea", "user_id": tenant.user, "properties": long_value}
    _refused(http.post("/v1/memories/search", json=search), 422, "body.properties.conversation_id")


def test_too_many_topic_selectors(http: httpx.Client, tenant: Tenant) -> None:
    selectors = [{"name": "UserKnowledge", "properties": {"n": str(i)}} for i in range(101)]
    body = {"query": "tea", "user_id": tenant.user, "topics": selectors}
    _refused(http.post("/v1/memories/search", json=body), 422, "body.topics")
    listing = {"user_id": tenant.user, "topics": ["UserKnowledge"] * 101}
    _refused(http.post("/v1/memories/list", json=listing), 422, "body.topics")


def test_selector_property_count(http: httpx.Client, tenant: Tenant) -> None:
    selector = {"name": "UserKnowledge", "properties": {f"k{i}": "v" for i in range(33)}}
    body = {"query": "tea", "user_id": tenant.user, "topics": [selector]}
    _refused(http.post("/v1/memories/search", json=body), 422, "body.topics[0].properties")


def test_chunked_body_over_the_limit_is_413(http: httpx.Client, tenant: Tenant) -> None:
    def chunks():
        yield b'{"user_id": "u", "input": {"string": {"content": ["'
        for _ in range(100):
            yield b"x" * 1024  # 100 KiB in all, over the server's 64 KiB; no Content-Length
        yield b'"]}}}'

    response = http.post(
        "/v1/memories", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413, response.text
    assert response.json()["status"] == 413


def test_instructions_too_long_at_put(http: httpx.Client) -> None:
    document = {
        "topics": [{"name": "Notes", "description": "Notes."}],
        "pipeline": {
            "steps": [
                {
                    "id": "extract",
                    "kind": "extract",
                    "input_type": "string",
                    "instructions": "be brief. " * 1700,
                    "next": "commit",
                },
                {"id": "commit", "kind": "commit"},
            ]
        },
    }
    _refused(
        http.put("/v1/groups/chatty", json=document), 422, "body.pipeline.steps[0].instructions"
    )
    assert http.get("/v1/groups/chatty").status_code == 404


def test_entry_step_that_cannot_take_raw_input_is_refused_at_put(http: httpx.Client) -> None:
    for kind in ("commit", "transform"):
        step = {"id": "entry", "kind": kind, "input_type": "string"}
        if kind == "transform":
            step |= {"instructions": "Summarise.", "next": "commit"}
        steps = [step] + ([{"id": "commit", "kind": "commit"}] if kind == "transform" else [])
        document = {
            "topics": [{"name": "Notes", "description": "Notes."}],
            "pipeline": {"steps": steps},
        }
        response = http.put(f"/v1/groups/bad-{kind}", json=document)
        problem = _refused(response, 422, "body.pipeline.steps[0]")
        assert "string" in problem["errors"][0]["message"]
        assert http.get(f"/v1/groups/bad-{kind}").status_code == 404


def test_pre_extracted_may_enter_at_a_commit(http: httpx.Client, tenant: Tenant) -> None:
    document = {
        "topics": [{"name": "Notes", "description": "Notes.", "scoping": {"user_scoped": True}}],
        "pipeline": {"steps": [{"id": "store", "kind": "commit", "input_type": "pre_extracted"}]},
    }
    assert http.put("/v1/groups/direct", json=document).status_code == 200
    body = {
        "group": "direct",
        "user_id": tenant.user,
        "input": {"pre_extracted": {"items": [{"topic": "Notes", "content": "Plain note."}]}},
    }
    run = http.post("/v1/memories", json=body).json()
    done = http.get(f"/v1/runs/{run['run_id']}", params={"wait": 30}).json()
    assert done["status"] == "completed", done


def test_invalid_group_document_names_the_field(http: httpx.Client) -> None:
    document = {
        "topics": [
            {"name": "Notes", "description": "Notes."},
            {"name": "9bad", "description": "x"},
        ],
        "pipeline": {"steps": [{"id": "c", "kind": "commit", "input_type": "pre_extracted"}]},
    }
    _refused(http.put("/v1/groups/named", json=document), 400, "body.topics[1].name")
