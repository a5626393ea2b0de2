"""An Engram stand-in: a real HTTP server that reads like Weaviate's Engram v1 API.

Built from Engram's public OpenAPI spec and API overview (weaviate/docs:
static/specs/engram-openapi.json, docs/engram/api-overview.md), for the read side an
export needs:

- `GET /v1/groups`: groups with `group_id`, `name` and topics (`topic_name`,
  `description`, `is_bounded`, `scoping{user_scoped, scope_properties}`);
- `POST /v1/memories/list`: at most 100 (default 20), newest first, no cursor, and
  `total` is the number returned;
- `POST /v1/memories/search`: `retrieval_config.limit` 1-100 (default 10) and
  `retrieval_type` vector, bm25, hybrid or fetch;
- property filters narrow only the topics scoped by that property; a per-topic `null`
  clears an inherited filter; an unknown group or topic is a 422 problem; a user-scoped
  topic without `user_id` is a 400;
- a path without `/v1`, or with a trailing slash, is a plain-text `404 page not found`;
- keys are `Authorization: Bearer eng_…`, anything else a 401 problem.

Search is simple and honest: bm25 matches terms (a memory without a query term is never
returned), the vector is the stand-in's own (hashed words), and a memory added with
`searchable=False` is never returned by any search (as a memory whose vector Engram never
wrote): such memories are reachable only by listing.

`fail_next` queues statuses (429 with Retry-After, 503) answered instead of the real
answer once `fail_at` requests were served, to exercise a client's retries and resumption;
`requests` counts every request.
"""

from __future__ import annotations

import copy
import json
import math
import re
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LIST_CAP = 100
WORDS = re.compile(r"[a-z0-9]+")
DIM = 64


def terms(text: str) -> list[str]:
    return WORDS.findall(text.lower())


@lru_cache(maxsize=20_000)
def hashed_vector(text: str) -> tuple[float, ...]:
    """The stand-in's own deterministic embedding: each word adds to a hashed dimension."""
    vector = [0.0] * DIM
    for word in terms(text):
        digest = uuid.uuid5(uuid.NAMESPACE_OID, word).int
        vector[digest % DIM] += 1.0 if (digest >> 7) % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return tuple(v / norm for v in vector)


@dataclass
class StandinMemory:
    content: str
    topic: str
    created_at: datetime
    group: str = "default"
    user_id: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    updated_at: datetime | None = None
    searchable: bool = True
    id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def wire(self, project: str, score: float | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "project_id": project,
            "content": self.content,
            "topic": self.topic,
            "group": self.group,
            "properties": dict(self.properties),
            "created_at": _time(self.created_at),
            "updated_at": _time(self.updated_at or self.created_at),
        }
        if self.user_id is not None:
            body["user_id"] = self.user_id
        if score is not None:
            body["score"] = score
        return body


def _time(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def topic(
    name: str, *, user_scoped: bool = True, properties: tuple[str, ...] = (), bounded: bool = False
) -> dict[str, Any]:
    return {
        "topic_name": name,
        "description": f"{name} memories.",
        "is_bounded": bounded,
        "scoping": {"user_scoped": user_scoped, "scope_properties": list(properties)},
    }


class Problem(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


TITLES = {400: "Bad Request", 401: "Unauthorized", 422: "Unprocessable Entity",
          429: "Too Many Requests", 503: "Service Unavailable"}  # fmt: skip


class EngramStandin:
    def __init__(self, groups: dict[str, list[dict[str, Any]]], key: str = "eng_standin") -> None:
        self.key = key
        self.project = str(uuid.uuid4())
        self.groups = {
            name: {"group_id": str(uuid.uuid5(uuid.NAMESPACE_URL, name)), "name": name,
                   "topics": copy.deepcopy(topics)}
            for name, topics in groups.items()
        }  # fmt: skip
        self.memories: list[StandinMemory] = []
        self.fail_next: list[tuple[int, float | None]] = []
        self.fail_at = 0  # fail_next applies from this many requests on
        self.requests: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    # -- set-up -------------------------------------------------------------------------
    def add(self, memory: StandinMemory) -> StandinMemory:
        self.memories.append(memory)
        return memory

    def start(self) -> EngramStandin:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                standin.handle(self, "GET")

            def do_POST(self) -> None:
                standin.handle(self, "POST")

            def do_DELETE(self) -> None:
                standin.handle(self, "DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    # -- HTTP ---------------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        path, _, _query = request.path.partition("?")
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        routes = {("GET", "/v1/groups"): self._groups, ("POST", "/v1/memories/list"): self._list,
                  ("POST", "/v1/memories/search"): self._search,
                  ("GET", "/v1/auth/verify"): lambda _body: None}  # fmt: skip
        if method == "GET" and path == "/health":
            return _send(request, 200, {"status": "healthy", "service": "engram-memory-server"})
        route = routes.get((method, path))
        if route is None:
            return _send_text(request, 404, "404 page not found")
        with self.lock:
            self.requests[path] += 1
            due = self.fail_next and sum(self.requests.values()) > self.fail_at
            failure = self.fail_next.pop(0) if due else None
        try:
            self._authenticate(request.headers.get("Authorization"))
            if failure is not None:
                status, retry_after = failure
                headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
                return _problem(request, Problem(status, "try again later"), headers)
            body = json.loads(raw) if raw else {}
            if not isinstance(body, dict):
                raise Problem(422, "the body must be a JSON object")
            answer = route(body)
        except Problem as problem:
            return _problem(request, problem)
        except json.JSONDecodeError:
            return _problem(request, Problem(400, "the body is not JSON"))
        if answer is None:
            request.send_response(204)
            request.end_headers()
            return None
        return _send(request, 200, answer)

    def _authenticate(self, header: str | None) -> None:
        if header is None:
            raise Problem(401, "missing Authorization header")
        scheme, _, key = header.partition(" ")
        if scheme != "Bearer":
            raise Problem(401, "the Authorization header must use the Bearer scheme")
        if not key.startswith("eng_"):
            raise Problem(401, "invalid API key format")
        if key != self.key:
            raise Problem(401, "invalid API key")

    def _groups(self, _body: dict[str, Any]) -> dict[str, Any]:
        return {"groups": list(self.groups.values())}

    def _list(self, body: dict[str, Any]) -> dict[str, Any]:
        limit = body.get("limit", 20)
        if not isinstance(limit, int) or not 1 <= limit <= LIST_CAP:
            raise Problem(422, f"limit must be between 1 and {LIST_CAP}")
        found = sorted(self._scoped(body), key=lambda m: (m.created_at, m.id), reverse=True)
        page = [m.wire(self.project) for m in found[:limit]]
        return {"memories": page, "total": len(page)}

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        query = body.get("query")
        if not isinstance(query, str) or not query:
            raise Problem(422, "query must be a non-empty string")
        config = body.get("retrieval_config") or {"retrieval_type": "hybrid"}
        kind, limit = config.get("retrieval_type"), config.get("limit", 10)
        if not isinstance(limit, int) or not 1 <= limit <= LIST_CAP:
            raise Problem(422, f"retrieval_config.limit must be between 1 and {LIST_CAP}")
        if kind not in ("vector", "bm25", "hybrid", "fetch"):
            raise Problem(400, f"unrecognized retrieval_type {kind!r}")
        pool = [m for m in self._scoped(body) if m.searchable]
        scored = self._scores(pool, query, kind)
        ranked = sorted(scored, key=lambda pair: (-pair[1], pair[0].id))[:limit]
        return {"memories": [m.wire(self.project, score) for m, score in ranked],
                "total": len(ranked)}  # fmt: skip

    def _scores(
        self, pool: list[StandinMemory], query: str, kind: str
    ) -> list[tuple[StandinMemory, float]]:
        wanted = set(terms(query))
        frequency = Counter(t for m in pool for t in set(terms(m.content)))
        bm25 = {
            m.id: sum(
                math.log(1 + len(pool) / frequency[t]) for t in wanted & set(terms(m.content))
            )
            for m in pool
        }
        if kind in ("bm25", "fetch"):
            return [(m, bm25[m.id]) for m in pool if bm25[m.id] > 0]
        q = hashed_vector(query)
        cosine = {m.id: sum(a * b for a, b in zip(q, hashed_vector(m.content), strict=True))
                  for m in pool}  # fmt: skip
        if kind == "vector":
            return [(m, cosine[m.id]) for m in pool]
        top = max(bm25.values(), default=0.0) or 1.0
        return [(m, 0.5 * cosine[m.id] + 0.5 * bm25[m.id] / top) for m in pool]

    def _scoped(self, body: dict[str, Any]) -> list[StandinMemory]:
        """The memories a list or search body selects, or the problem Engram answers."""
        name = body.get("group", "default")
        group = self.groups.get(name)
        if group is None:
            raise Problem(422, f'group "{name}" not found')
        topics = {t["topic_name"]: t for t in group["topics"]}
        shared = body.get("properties") or {}
        wanted: dict[str, dict[str, str | None]] = {}
        for entry in body.get("topics") or list(topics):
            entry_name = entry if isinstance(entry, str) else entry.get("name")
            if entry_name not in topics:
                raise Problem(422, f'topic "{entry_name}" not found in group "{name}"')
            scoped_by = topics[entry_name]["scoping"].get("scope_properties") or []
            own = {} if isinstance(entry, str) else (entry.get("properties") or {})
            unknown = sorted(set(own) - set(scoped_by))
            if unknown:
                raise Problem(422, f'topic "{entry_name}" is not scoped by {unknown}')
            # A shared filter narrows only topics scoped by its key; null clears it.
            filters = {k: v for k, v in shared.items() if k in scoped_by}
            filters.update(own)
            wanted[entry_name] = filters
        user = body.get("user_id")
        for entry_name in wanted:
            if topics[entry_name]["scoping"]["user_scoped"] and not user:
                raise Problem(400, f'topic "{entry_name}" is user-scoped: user_id is required')
        return [
            m
            for m in self.memories
            if m.group == name
            and m.topic in wanted
            and (not topics[m.topic]["scoping"]["user_scoped"]
                 or (m.user_id or "").lower() == str(user).lower())
            and all(v is None or m.properties.get(k) == v for k, v in wanted[m.topic].items())
        ]  # fmt: skip


def _send(request: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode("utf-8")
    request.send_response(status)
    request.send_header("Content-Type", "application/json")
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)


def _send_text(request: BaseHTTPRequestHandler, status: int, text: str) -> None:
    data = text.encode("utf-8")
    request.send_response(status)
    request.send_header("Content-Type", "text/plain; charset=utf-8")
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)


def _problem(
    request: BaseHTTPRequestHandler, problem: Problem, headers: dict[str, str] | None = None
) -> None:
    body = {"$schema": "https://api.engram.weaviate.io/schemas/ErrorModel.json",
            "title": TITLES.get(problem.status, "Error"), "status": problem.status,
            "detail": problem.detail}  # fmt: skip
    data = json.dumps(body).encode("utf-8")
    request.send_response(problem.status)
    request.send_header("Content-Type", "application/problem+json")
    request.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        request.send_header(name, value)
    request.end_headers()
    request.wfile.write(data)
