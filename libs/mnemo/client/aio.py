"""`AsyncMnemoClient`: the asynchronous HTTP client, shaped like the Engram SDK's."""

from __future__ import annotations

import builtins
import time
from datetime import datetime
from typing import Any

import httpx

from mnemo.client import requests as r
from mnemo.client.models import (
    AddResult,
    GroupConfig,
    GroupSummary,
    InputLike,
    Memory,
    MemoryVersion,
    Provenance,
    Run,
    SearchResults,
)
from mnemo.client.transport import DEFAULT_TIMEOUT, AsyncSender, AsyncTransport
from mnemo.domain.requests import GroupDocument


class Memories:
    def __init__(self, transport: AsyncSender) -> None:
        self._t = transport

    async def add(
        self,
        input: InputLike,
        *,
        user_id: str | None = None,
        group: str | None = None,
        properties: dict[str, str] | None = None,
        root: str | None = None,
        idempotency_key: str | None = None,
    ) -> AddResult:
        """`idempotency_key` (mnemo extension): a repeat with the same key and input within
        the server's window returns the first add's run; nothing is processed twice."""
        request = r.add_request(
            input, user_id=user_id, group=group, properties=properties, root=root
        )
        return await self._t.send(r.add_memories(request, idempotency_key))

    async def search(
        self,
        query: str,
        *,
        topics: builtins.list[r.TopicLike] | None = None,
        user_id: str | None = None,
        group: str | None = None,
        properties: dict[str, str] | None = None,
        retrieval_config: r.RetrievalLike = None,
        as_of: datetime | None = None,
    ) -> SearchResults:
        """`as_of` (mnemo extension): answer from the memories as they stood then."""
        request = r.search_request(
            query, topics, retrieval_config, user_id=user_id, group=group, properties=properties,
            as_of=as_of,
        )  # fmt: skip
        return await self._t.send(r.search_memories(request))

    async def list(
        self,
        *,
        topics: builtins.list[r.TopicLike] | None = None,
        user_id: str | None = None,
        group: str | None = None,
        properties: dict[str, str] | None = None,
        limit: int = 20,
        offset: int = 0,
        as_of: datetime | None = None,
        cursor: str | None = None,
    ) -> SearchResults:
        """Newest first: `limit` memories after skipping `offset`; `total` counts all matches.
        `as_of` (extension): the memories as they stood then. `cursor` (extension): the
        previous page's `next_cursor`, for paging that is stable under writes."""
        request = r.list_request(
            topics,
            limit,
            offset,
            user_id=user_id,
            group=group,
            properties=properties,
            as_of=as_of,
            cursor=cursor,
        )
        return await self._t.send(r.list_memories(request))

    async def get(
        self, memory_id: str, *, user_id: str | None = None, group: str | None = None
    ) -> Memory:
        return await self._t.send(r.get_memory(memory_id, user_id, group))

    async def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        group: str | None = None,
        erase: bool = False,
    ) -> None:
        await self._t.send(r.delete_memory(memory_id, user_id, group, erase))

    async def history(
        self, memory_id: str, *, user_id: str | None = None, group: str | None = None
    ) -> builtins.list[MemoryVersion]:
        return await self._t.send(r.memory_history(memory_id, user_id, group))

    async def provenance(
        self, memory_id: str, *, user_id: str | None = None, group: str | None = None
    ) -> Provenance:
        """Every version with the run that wrote it and that run's raw input (extension)."""
        return await self._t.send(r.memory_provenance(memory_id, user_id, group))


class Runs:
    def __init__(self, transport: AsyncSender) -> None:
        self._t = transport

    async def get(self, run_id: str) -> Run:
        return await self._t.send(r.get_run(run_id))

    async def wait(self, run_id: str, *, timeout: float = 30.0) -> Run:
        """The run once completed or failed; RunTimeoutError after `timeout` seconds."""
        return await self._t.drive(r.wait_for_run(run_id, timeout, time.monotonic))

    async def retry(self, run_id: str) -> Run:
        return await self._t.send(r.retry_run(run_id))


class Groups:
    def __init__(self, transport: AsyncSender) -> None:
        self._t = transport

    async def list(self) -> builtins.list[GroupSummary]:
        return await self._t.send(r.list_groups())

    async def get(self, name: str) -> GroupConfig:
        return await self._t.send(r.get_group(name))

    async def put(self, name: str, document: dict[str, Any] | GroupDocument) -> GroupConfig:
        """Create or replace a group from `{"template": ...}` or `{"topics", "pipeline"}`."""
        return await self._t.send(r.put_group(name, GroupDocument.model_validate(document)))


class Users:
    def __init__(self, transport: AsyncSender) -> None:
        self._t = transport

    async def erase(self, user_id: str) -> int:
        """Erase everything of a user (see DELETE /v1/users); returns how many memories went."""
        return await self._t.send(r.erase_user(user_id))


class AsyncMnemoClient:
    """Asynchronous client for a mnemo (or any Engram v1) server."""

    def __init__(
        self,
        *,
        base_url: str = "http://127.0.0.1:8080",
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._bind(AsyncTransport(base_url, api_key, timeout, http_client))

    def _bind(self, transport: AsyncSender) -> None:
        self._transport = transport
        self.memories = Memories(transport)
        self.runs = Runs(transport)
        self.groups = Groups(transport)
        self.users = Users(transport)

    async def verify(self) -> None:
        """Raises AuthenticationError unless the API key is valid."""
        await self._transport.send(r.verify_key())

    async def status(self) -> dict[str, Any]:
        """GET /v1/status: the key's project (`project`) and its recent failures."""
        return await self._transport.send(r.project_status())

    async def import_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /v1/import: write memories as they are (same ids, nothing extracted), as
        `mnemo import` does; returns the import report."""
        return await self._transport.send(r.import_batch(body))

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncMnemoClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
