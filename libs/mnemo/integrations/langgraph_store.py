"""A LangGraph `BaseStore` whose items are mnemo memories, for LangGraph's long-term memory
(`graph.compile(store=MnemoStore(client))`, `runtime.store` / `get_store()` in nodes).

How items map onto mnemo:
- a namespace is a mnemo user (an opaque id encoding the namespace exactly: mnemo compares
  user ids case-insensitively, the encoding keeps ("Ada",) and ("ada",) apart);
- an item is a memory of the store's group (default `langgraph`, created on first use with
  one user-scoped topic) whose id derives from project, group, namespace and key, written
  as it is through mnemo's import (no extraction: a store keeps what it is given);
- its content is the JSON of `{"key", "value"}`, which hybrid search (vector plus BM25)
  ranks for `search(namespace, query=...)`.

Limits: the store is async only (`aget`, `aput`, `asearch`, `adelete`, `abatch`: mnemo's
client is async; the sync methods raise NotImplementedError saying so). `search` reads its
`namespace_prefix` as a whole namespace: items of longer namespaces under it are not
found (a namespace is one mnemo user, and mnemo does not match users by prefix), and
`list_namespaces` raises NotImplementedError for the same reason. No TTL. A `filter` is
applied to the values of the best 100 matches.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from mnemo.client.aio import AsyncMnemoClient
from mnemo.client.errors import NotFoundError, ValidationError
from mnemo.client.models import HybridRetrieval, Memory
from mnemo.integrations.memory_tools import require

require("langgraph.store.base", "LangGraph")  # an actionable error when it is missing
from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

TOPIC = "items"
USER_PREFIX = "lg."
MAX_USER_ID = 256
FETCH_CEILING = 100  # the most one search or list returns

_GROUP_DOCUMENT: dict[str, Any] = {
    "description": "Items of a LangGraph store (mnemo.integrations.langgraph_store).",
    "topics": [
        {
            "name": TOPIC,
            "description": "A LangGraph store item, kept as given.",
            "scoping": {"user_scoped": True},
        }
    ],
    # Items arrive through import; this pipeline only serves adds someone sends by hand.
    "pipeline": {
        "steps": [
            {
                "id": "pre_extracted",
                "kind": "extract",
                "input_type": "pre_extracted",
                "next": "commit",
            },
            {"id": "commit", "kind": "commit"},
        ]
    },
}


def user_for(namespace: tuple[str, ...]) -> str:
    """The mnemo user id of a namespace: exact, and safe under case-folding (base32)."""
    if not namespace or any(not isinstance(label, str) or not label for label in namespace):
        raise InvalidNamespaceError(
            f"a namespace is a non-empty tuple of non-empty strings: {namespace!r}"
        )
    encoded = base64.b32encode(json.dumps(list(namespace)).encode()).decode().rstrip("=").lower()
    user = USER_PREFIX + encoded
    if len(user) > MAX_USER_ID:
        raise InvalidNamespaceError(
            f"namespace {namespace!r} is too long for mnemo (at most ~150 bytes)"
        )
    return user


class MnemoStore(BaseStore):
    """LangGraph's `BaseStore` over one mnemo project (the client's key's)."""

    supports_ttl = False

    def __init__(self, client: AsyncMnemoClient, *, group: str = "langgraph") -> None:
        self.client = client
        self.group = group
        self._project: str | None = None

    # --- the BaseStore contract ---------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise NotImplementedError(
            "MnemoStore is async: use aget/aput/asearch/adelete (or ainvoke/astream a graph)"
        )

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        project = await self._setup()
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op.namespace, op.key))
            elif isinstance(op, PutOp):
                await self._put(project, op.namespace, op.key, op.value)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                raise NotImplementedError(
                    "MnemoStore cannot list namespaces: each is a mnemo user, and mnemo does not "
                    "list users"
                )
            else:
                raise TypeError(f"unknown store operation {op!r}")
        return results

    # --- operations ---------------------------------------------------------------------

    async def _setup(self) -> str:
        """The project (part of every item id), and the group, created if missing."""
        if self._project is None:
            try:
                await self.client.groups.get(self.group)
            except NotFoundError:
                await self.client.groups.put(self.group, _GROUP_DOCUMENT)
            self._project = str((await self.client.status())["project"])
        return self._project

    def _memory_id(self, project: str, namespace: tuple[str, ...], key: str) -> str:
        name = json.dumps([project, self.group, list(namespace), key])
        return f"lg-{uuid.uuid5(uuid.NAMESPACE_URL, name)}"

    async def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        user = user_for(namespace)
        memory_id = self._memory_id(await self._setup(), namespace, key)
        memory = await self._memory(memory_id, user)
        return None if memory is None else _item(memory, namespace)

    async def _memory(self, memory_id: str, user: str) -> Any:
        """The memory, or None when it is not there: a 404, or Engram's 422 for a user the
        project has never seen (a namespace nothing was put in yet)."""
        try:
            return await self.client.memories.get(memory_id, user_id=user, group=self.group)
        except NotFoundError:
            return None
        except ValidationError as exc:
            if _unknown_user(exc):
                return None
            raise

    async def _put(
        self, project: str, namespace: tuple[str, ...], key: str, value: Mapping[str, Any] | None
    ) -> None:
        user = user_for(namespace)
        memory_id = self._memory_id(project, namespace, key)
        if value is None:
            try:
                await self.client.memories.delete(memory_id, user_id=user, group=self.group)
            except NotFoundError:
                pass  # deleting what is not there is done
            except ValidationError as exc:
                if not _unknown_user(exc):
                    raise
            return
        now = datetime.now(UTC)
        existing = await self._memory(memory_id, user)
        created = now if existing is None else existing.created_at
        stamp = now.isoformat()
        await self.client.import_batch(
            {
                "memories": [
                    {
                        "id": memory_id,
                        "group": self.group,
                        "topic": TOPIC,
                        "user_id": user,
                        "content": json.dumps(
                            {"key": key, "value": dict(value)}, ensure_ascii=False
                        ),
                        "created_at": created.isoformat(),
                        "updated_at": stamp,
                        "event_time": stamp,
                        "event_time_end": stamp,
                    }
                ]
            }
        )

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        namespace = tuple(op.namespace_prefix)
        user = user_for(namespace)
        wanted = op.offset + op.limit
        fetch = FETCH_CEILING if op.filter else min(FETCH_CEILING, wanted)
        if op.query:
            found = await self.client.memories.search(
                op.query,
                user_id=user,
                group=self.group,
                retrieval_config=HybridRetrieval(limit=fetch),
            )
            memories = list(found)
        else:
            found = await self.client.memories.list(user_id=user, group=self.group, limit=fetch)
            memories = list(found)
        items = [_search_item(m, namespace) for m in memories]
        if op.filter:
            items = [i for i in items if all(i.value.get(k) == v for k, v in op.filter.items())]
        return items[op.offset : wanted]


def _item(memory: Memory, namespace: tuple[str, ...]) -> Item:
    stored = json.loads(memory.content)
    return Item(
        value=stored["value"],
        key=stored["key"],
        namespace=namespace,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
    )


def _search_item(memory: Memory, namespace: tuple[str, ...]) -> SearchItem:
    stored = json.loads(memory.content)
    return SearchItem(
        namespace=namespace,
        key=stored["key"],
        value=stored["value"],
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        score=memory.score,
    )


def _unknown_user(exc: ValidationError) -> bool:
    """Engram's 422 for a user_id the project has never seen (nothing of theirs exists)."""
    return any(error.get("location") == "query.user_id" for error in exc.errors)
