"""`EngineClient`: the async client API over an Engine already running in this process.

It builds requests with the same code as the HTTP clients and raises the same typed errors.
It knows only the Engine facade (`mnemo.core`), not how the engine was started, so the
gateway can use it (the MCP tools on /mcp); `EmbeddedClient` adds starting one.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from mnemo.api.statuses import status_of
from mnemo.client import requests as r
from mnemo.client.errors import NotFoundError, RunTimeoutError, error_for
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
from mnemo.core.access import visible_run
from mnemo.core.engine import Engine
from mnemo.domain.grants import (
    Forbidden,
    Grant,
    require_project_wide,
    require_write,
    user_for,
)
from mnemo.domain.requests import GroupDocument, InvalidRequest, NotFound


@contextmanager
def _typed_errors() -> Iterator[None]:
    """Engine refusals become the errors the HTTP clients raise for the same request."""
    try:
        yield
    except InvalidRequest as exc:
        errors = [e.model_dump() for e in exc.errors]
        raise error_for(status_of(exc), {"detail": exc.detail, "errors": errors}) from exc
    except NotFound as exc:
        raise NotFoundError(404, {"detail": str(exc)}) from exc
    except Forbidden as exc:
        raise error_for(403, {"detail": str(exc)}) from exc


class _Resource:
    """Acts within `grant`: a read-only or user-bound credential's limits hold here too
    (the MCP tools on /mcp call through this class)."""

    def __init__(self, engine: Engine, grant: Grant) -> None:
        self._engine = engine
        self._grant = grant
        self._project = grant.project

    def _user(self, user_id: str | None) -> str | None:
        with _typed_errors():
            return user_for(self._grant, user_id)

    def _check(self, write: str | None = None, project_wide: str | None = None) -> None:
        with _typed_errors():
            if write:
                require_write(self._grant, write)
            if project_wide:
                require_project_wide(self._grant, project_wide)


class Memories(_Resource):
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
        self._check(write="add memories")
        request = r.add_request(
            input, user_id=self._user(user_id), group=group, properties=properties, root=root
        )
        with _typed_errors():
            run = await self._engine.add(self._project, request, idempotency_key)
        return AddResult(run_id=run.run_id, status=run.status, error=run.error)

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
        request = r.search_request(
            query, topics, retrieval_config, user_id=self._user(user_id), group=group, properties=properties,
            as_of=as_of,
        )  # fmt: skip
        with _typed_errors():
            found = await self._engine.search(self._project, request)
        return SearchResults(found, len(found))

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
            topics, limit, offset, user_id=self._user(user_id), group=group, properties=properties,
            as_of=as_of, cursor=cursor,
        )  # fmt: skip
        with _typed_errors():
            page = await self._engine.list_page(self._project, request)
        return SearchResults(page.memories, page.total, page.next_cursor)

    async def get(
        self, memory_id: str, *, user_id: str | None = None, group: str | None = None
    ) -> Memory:
        with _typed_errors():
            return await self._engine.get_memory(
                self._project, group or "default", self._user(user_id), memory_id
            )

    async def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        group: str | None = None,
        erase: bool = False,
    ) -> None:
        self._check(write="delete a memory")
        remove = self._engine.erase_memory if erase else self._engine.delete_memory
        with _typed_errors():
            await remove(self._project, group or "default", self._user(user_id), memory_id)

    async def history(
        self, memory_id: str, *, user_id: str | None = None, group: str | None = None
    ) -> builtins.list[MemoryVersion]:
        with _typed_errors():
            return await self._engine.memory_history(
                self._project, group or "default", self._user(user_id), memory_id
            )

    async def provenance(
        self, memory_id: str, *, user_id: str | None = None, group: str | None = None
    ) -> Provenance:
        with _typed_errors():
            return await self._engine.memory_provenance(
                self._project, group or "default", self._user(user_id), memory_id
            )


class Runs(_Resource):
    async def get(self, run_id: str) -> Run:
        with _typed_errors():
            return await visible_run(self._engine, self._grant, run_id)

    async def wait(self, run_id: str, *, timeout: float = 30.0) -> Run:
        with _typed_errors():
            await visible_run(self._engine, self._grant, run_id)
            run = await self._engine.wait_run(self._project, run_id, timeout)
        if not run.status.terminal:
            raise RunTimeoutError(run_id, timeout)
        return run

    async def retry(self, run_id: str) -> Run:
        self._check(write="retry a run")
        with _typed_errors():
            await visible_run(self._engine, self._grant, run_id)
            return await self._engine.retry_run(self._project, run_id)


class Groups(_Resource):
    async def list(self) -> builtins.list[GroupSummary]:
        with _typed_errors():
            return [GroupSummary.of(g) for g in await self._engine.list_groups(self._project)]

    async def get(self, name: str) -> GroupConfig:
        with _typed_errors():
            return await self._engine.group(self._project, name)

    async def put(self, name: str, document: dict[str, Any] | GroupDocument) -> GroupConfig:
        self._check(write="change a group", project_wide="change a group")
        body = GroupDocument.model_validate(document).model_dump(exclude_none=True)
        with _typed_errors():
            return await self._engine.put_group(self._project, name, body)


class Users(_Resource):
    async def erase(self, user_id: str) -> int:
        with _typed_errors():
            require_write(self._grant, "erase a user")
            user = user_for(self._grant, user_id) or user_id
            return (await self._engine.erase_user(self._project, user)).erased


class EngineClient:
    """The AsyncMnemoClient API against a borrowed Engine, acting for `project`, or within
    `grant` (a credential's project, read-only flag and bound user)."""

    def __init__(
        self, engine: Engine, *, project: str | None = None, grant: Grant | None = None
    ) -> None:
        self.engine = engine
        self.grant = grant or Grant(project or engine.settings.project)
        self.project = self.grant.project
        self.memories = Memories(engine, self.grant)
        self.runs = Runs(engine, self.grant)
        self.groups = Groups(engine, self.grant)
        self.users = Users(engine, self.grant)
