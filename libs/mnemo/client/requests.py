"""Request building and response parsing shared by every client (one code path).

Each builder returns a `Call`: the HTTP request to make and how to parse its answer, and
the same operation by name (`op`, a method of `mnemo.core.granted.Granted`, with `args`)
for the in-process transport. The clients only differ in how they send it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import ValidationError as PydanticValidationError

from mnemo.client.errors import RunTimeoutError, ValidationError
from mnemo.client.models import (
    AddInput,
    AddResult,
    ConversationInput,
    GroupConfig,
    GroupSummary,
    InputLike,
    Memory,
    MemoryVersion,
    PreExtractedInput,
    Provenance,
    RetrievalConfig,
    Run,
    SearchResults,
    StringInput,
    Topic,
)
from mnemo.domain.idempotency import HEADER
from mnemo.domain.requests import AddRequest, GroupDocument, ListRequest, SearchRequest

T = TypeVar("T")
TopicLike = str | Topic
RetrievalLike = RetrievalConfig | str | None
WaitPlan = Generator["Call[Run]", Run, Run]
MAX_SERVER_WAIT = 60.0  # the gateway caps ?wait= at 60 s


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[Any], T]
    params: dict[str, Any] | None = None
    json: Any = None
    # Extra seconds the server may legitimately hold the request (long polls).
    extra_timeout: float = 0.0
    headers: dict[str, str] | None = None
    # The same request for a transport without HTTP (mnemo.client.engine_client): the
    # operation's name and its arguments as domain objects.
    op: str = ""
    args: dict[str, Any] = field(default_factory=dict)


def local_error(exc: PydanticValidationError) -> ValidationError:
    errors = [
        {"location": ".".join(["body", *map(str, e["loc"])]), "message": e["msg"]}
        for e in exc.errors()
    ]
    return ValidationError(422, {"detail": "invalid request (checked locally)", "errors": errors})


def to_add_input(data: InputLike) -> AddInput:
    """Text, a list of texts, OpenAI-style message dicts or a typed input -> AddInput."""
    if isinstance(data, AddInput):
        return data
    if isinstance(data, str):
        return AddInput(string=StringInput(content=[data]))
    if isinstance(data, StringInput):
        return AddInput(string=data)
    if isinstance(data, ConversationInput):
        return AddInput(conversation=data)
    if isinstance(data, PreExtractedInput):
        return AddInput(pre_extracted=data)
    items = list(data)
    if all(isinstance(i, str) for i in items):
        return AddInput(string=StringInput(content=items))
    return AddInput(conversation=ConversationInput.model_validate({"messages": items}))


def add_request(data: InputLike, **fields: Any) -> AddRequest:
    try:
        return AddRequest(input=to_add_input(data), **_given(fields))
    except PydanticValidationError as exc:
        raise local_error(exc) from exc


def search_request(
    query: str, topics: list[TopicLike] | None, retrieval: RetrievalLike, **fields: Any
) -> SearchRequest:
    config = (
        {"retrieval_type": retrieval, "limit": None}
        if isinstance(retrieval, str)
        else (retrieval.wire() if retrieval is not None else None)
    )
    try:
        return SearchRequest(query=query, topics=topics, retrieval_config=config, **_given(fields))
    except PydanticValidationError as exc:
        raise local_error(exc) from exc


def list_request(
    topics: list[TopicLike] | None, limit: int, offset: int = 0, **fields: Any
) -> ListRequest:
    # offset is sent only when paging, so plain Engram servers see no change
    given = _given({**fields, "offset": offset or None})
    try:
        return ListRequest(topics=topics, limit=limit, **given)
    except PydanticValidationError as exc:
        raise local_error(exc) from exc


def _given(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _body(model: Any) -> Any:
    return model.model_dump(mode="json", exclude_none=True)


def _scope(user_id: str | None, group: str | None) -> dict[str, str]:
    return _given({"user_id": user_id, "group": group})


def _page(data: Any) -> SearchResults:
    memories = [Memory.model_validate(m) for m in data["memories"]]
    return SearchResults(memories, int(data["total"]), data.get("next_cursor"))


def _none(_: Any) -> None:
    return None


def _segment(value: str) -> str:
    """An id as one path segment, whatever characters it holds."""
    return quote(str(value), safe="")


# --- calls -------------------------------------------------------------------------------


def add_memories(request: AddRequest, idempotency_key: str | None = None) -> Call[AddResult]:
    headers = {HEADER: idempotency_key} if idempotency_key is not None else None
    return Call(
        "POST", "/v1/memories", AddResult.model_validate, json=_body(request), headers=headers,
        op="admit", args={"request": request, "idempotency_key": idempotency_key},
    )  # fmt: skip


def search_memories(request: SearchRequest) -> Call[SearchResults]:
    return Call(
        "POST", "/v1/memories/search", _page, json=_body(request),
        op="search", args={"request": request},
    )  # fmt: skip


def list_memories(request: ListRequest) -> Call[SearchResults]:
    return Call(
        "POST", "/v1/memories/list", _page, json=_body(request),
        op="list_page", args={"request": request},
    )  # fmt: skip


def _addressed(memory_id: str, user_id: str | None, group: str | None) -> dict[str, Any]:
    return {"memory_id": memory_id, "user_id": user_id, "group": group}


def get_memory(memory_id: str, user_id: str | None, group: str | None) -> Call[Memory]:
    return Call(
        "GET", f"/v1/memories/{_segment(memory_id)}", Memory.model_validate,
        params=_scope(user_id, group),
        op="get_memory", args=_addressed(memory_id, user_id, group),
    )  # fmt: skip


def delete_memory(
    memory_id: str, user_id: str | None, group: str | None, erase: bool
) -> Call[None]:
    params: dict[str, Any] = _scope(user_id, group)
    if erase:
        params["erase"] = "true"
    return Call(
        "DELETE", f"/v1/memories/{_segment(memory_id)}", _none, params=params,
        op="delete_memory", args={**_addressed(memory_id, user_id, group), "erase": erase},
    )  # fmt: skip


def memory_history(
    memory_id: str, user_id: str | None, group: str | None
) -> Call[list[MemoryVersion]]:
    def parse(data: Any) -> list[MemoryVersion]:
        return [MemoryVersion.model_validate(v) for v in data["versions"]]

    return Call(
        "GET", f"/v1/memories/{_segment(memory_id)}/history", parse,
        params=_scope(user_id, group),
        op="memory_history", args=_addressed(memory_id, user_id, group),
    )  # fmt: skip


def memory_provenance(memory_id: str, user_id: str | None, group: str | None) -> Call[Provenance]:
    return Call(
        "GET", f"/v1/memories/{_segment(memory_id)}/provenance", Provenance.model_validate,
        params=_scope(user_id, group),
        op="memory_provenance", args=_addressed(memory_id, user_id, group),
    )  # fmt: skip


def get_run(run_id: str, wait: float | None = None) -> Call[Run]:
    params = {"wait": wait} if wait else None
    return Call(
        "GET", f"/v1/runs/{_segment(run_id)}", Run.model_validate,
        params=params, extra_timeout=wait or 0.0,
        op="get_run", args={"run_id": run_id, "wait": wait},
    )  # fmt: skip


def retry_run(run_id: str) -> Call[Run]:
    return Call(
        "POST", f"/v1/runs/{_segment(run_id)}/retry", Run.model_validate,
        op="retry_run", args={"run_id": run_id},
    )  # fmt: skip


def list_groups() -> Call[list[GroupSummary]]:
    def parse(data: Any) -> list[GroupSummary]:
        return [GroupSummary.model_validate(g) for g in data["groups"]]

    return Call("GET", "/v1/groups", parse, op="list_groups")


def get_group(name: str) -> Call[GroupConfig]:
    return Call(
        "GET", f"/v1/groups/{_segment(name)}", GroupConfig.model_validate,
        op="group", args={"name": name},
    )  # fmt: skip


def put_group(name: str, document: GroupDocument) -> Call[GroupConfig]:
    return Call(
        "PUT", f"/v1/groups/{_segment(name)}", GroupConfig.model_validate, json=_body(document),
        op="put_group", args={"name": name, "document": document},
    )  # fmt: skip


def wait_for_run(run_id: str, timeout: float, now: Callable[[], float]) -> WaitPlan:
    """Long-poll `GET /v1/runs/{id}?wait=` until the run is terminal or `timeout` passes.

    A generator of calls so the sync and async clients drive the same loop.
    """
    deadline = now() + timeout
    while True:
        remaining = round(min(MAX_SERVER_WAIT, max(0.0, deadline - now())), 3)
        run = yield get_run(run_id, wait=remaining or None)
        if run.status.terminal:
            return run
        if now() >= deadline:
            raise RunTimeoutError(run_id, timeout)


def erase_user(user_id: str) -> Call[int]:
    return Call(
        "DELETE", f"/v1/users/{_segment(user_id)}", lambda data: int(data["erased"]),
        op="erase_user", args={"user_id": user_id},
    )  # fmt: skip


def project_status() -> Call[dict[str, Any]]:
    return Call("GET", "/v1/status", dict, op="status")


def import_batch(body: dict[str, Any]) -> Call[dict[str, Any]]:
    return Call("POST", "/v1/import", dict, json=body, op="import_batch", args={"body": body})


def verify_key() -> Call[None]:
    return Call("GET", "/v1/auth/verify", _none, op="verify")
