"""The Engine's operations as one credential may perform them, written once for the REST
routes and the in-process clients (the MCP tools on /mcp, `EmbeddedClient`).

A `Grant` (mnemo.domain.grants) names the credential's project, whether it may write, and
the one user it may see. `Granted` applies all three before it calls the Engine: a
read-only credential is refused writes (403), a user-bound one acts for its user only and
never learns of another user's runs or memories (404, as for a missing one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemo.core.access import visible_run
from mnemo.core.imports import import_batch
from mnemo.domain.grants import Grant, require_project_wide, require_write, user_for
from mnemo.domain.memory import RunState

if TYPE_CHECKING:
    from mnemo.core.engine import Engine
    from mnemo.core.idempotency import Admission
    from mnemo.domain.erasure import ErasureReport
    from mnemo.domain.group import GroupConfig
    from mnemo.domain.memory import Memory, MemoryVersion, Run
    from mnemo.domain.paging import MemoryListing
    from mnemo.domain.provenance import Provenance
    from mnemo.domain.requests import AddRequest, GroupDocument, ListRequest, SearchRequest
    from mnemo.domain.transfer import ImportBatch, ImportReport

DEFAULT_GROUP = "default"


class Granted:
    """The Engine as `grant` may use it. Every method refuses what the grant may not do
    (`mnemo.domain.grants.Forbidden`) before anything is read or stored."""

    def __init__(self, engine: Engine, grant: Grant) -> None:
        self.engine = engine
        self.grant = grant
        self.project = grant.project

    def _user(self, user_id: str | None) -> str | None:
        return user_for(self.grant, user_id)

    # --- memories --------------------------------------------------------------------

    async def admit(self, request: AddRequest, idempotency_key: str | None = None) -> Admission:
        require_write(self.grant, "add memories")
        request = request.model_copy(update={"user_id": self._user(request.user_id)})
        return await self.engine.admit(self.project, request, idempotency_key)

    async def search(self, request: SearchRequest) -> list[Memory]:
        request = request.model_copy(update={"user_id": self._user(request.user_id)})
        return await self.engine.search(self.project, request)

    async def list_page(self, request: ListRequest) -> MemoryListing:
        request = request.model_copy(update={"user_id": self._user(request.user_id)})
        return await self.engine.list_page(self.project, request)

    async def get_memory(self, memory_id: str, user_id: str | None, group: str | None) -> Memory:
        return await self.engine.get_memory(
            self.project, group or DEFAULT_GROUP, self._user(user_id), memory_id
        )

    async def delete_memory(
        self, memory_id: str, user_id: str | None, group: str | None, erase: bool = False
    ) -> None:
        """Delete (kept in history), or with `erase` remove every trace of the memory."""
        require_write(self.grant, "delete a memory")
        remove = self.engine.erase_memory if erase else self.engine.delete_memory
        await remove(self.project, group or DEFAULT_GROUP, self._user(user_id), memory_id)

    async def memory_history(
        self, memory_id: str, user_id: str | None, group: str | None
    ) -> list[MemoryVersion]:
        return await self.engine.memory_history(
            self.project, group or DEFAULT_GROUP, self._user(user_id), memory_id
        )

    async def memory_provenance(
        self, memory_id: str, user_id: str | None, group: str | None
    ) -> Provenance:
        return await self.engine.memory_provenance(
            self.project, group or DEFAULT_GROUP, self._user(user_id), memory_id
        )

    async def memory_sources(
        self, memory_id: str, user_id: str | None, group: str | None
    ) -> list[Memory]:
        return await self.engine.memory_sources(
            self.project, group or DEFAULT_GROUP, self._user(user_id), memory_id
        )

    # --- runs --------------------------------------------------------------------------

    async def get_run(self, run_id: str, wait: float | None = None) -> Run:
        """The run; with `wait`, once terminal or after `wait` seconds, whichever is first."""
        run = await visible_run(self.engine, self.grant, run_id)
        if wait:
            run = await self.engine.wait_run(self.project, run_id, wait)
        return run

    async def retry_run(self, run_id: str) -> Run:
        require_write(self.grant, "retry a run")
        await visible_run(self.engine, self.grant, run_id)
        return await self.engine.retry_run(self.project, run_id)

    async def failed_runs(self, limit: int = 5) -> list[Run]:
        """The project's latest failed runs, newest first (a project-wide read)."""
        require_project_wide(self.grant, "read the project's status")
        return await self.engine.list_runs(self.project, status=RunState.failed, limit=limit)

    # --- groups, users, transfer ---------------------------------------------------------

    async def list_groups(self) -> list[GroupConfig]:
        return await self.engine.list_groups(self.project)

    async def group(self, name: str) -> GroupConfig:
        return await self.engine.group(self.project, name)

    async def put_group(
        self, name: str, document: GroupDocument, if_match: str | None = None
    ) -> GroupConfig:
        """Create or replace; with `if_match` only if the group is still stored as read."""
        require_write(self.grant, "change a group")
        require_project_wide(self.grant, "change a group")
        return await self.engine.put_group(self.project, name, document.as_document(), if_match)

    async def delete_group(self, name: str, force: bool) -> int:
        """Remove the group (with its memories when `force`); returns how many went."""
        require_write(self.grant, "change a group")
        require_project_wide(self.grant, "change a group")
        return await self.engine.delete_group(self.project, name, force)

    async def erase_user(self, user_id: str) -> ErasureReport:
        require_write(self.grant, "erase a user")
        return await self.engine.erase_user(self.project, self._user(user_id) or user_id)

    async def import_batch(self, batch: ImportBatch) -> ImportReport:
        require_write(self.grant, "import")
        require_project_wide(self.grant, "import")
        return await import_batch(self.engine, self.project, batch)
