"""`EngineClient`: `AsyncMnemoClient` over an Engine already running in this process.

The client's surface is `mnemo.client.aio`'s, unchanged: only its transport differs.
`EngineTransport` sends each `Call` to `mnemo.core.granted.Granted` (the operation the call
names, with its domain arguments) instead of over HTTP, and answers with what the HTTP
transport would parse, raising the same typed errors. It knows only the Engine facade
(`mnemo.core`), not how the engine was started, so the gateway uses it for the MCP tools on
/mcp; `EmbeddedClient` adds starting one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from pydantic import ValidationError as PydanticValidationError

from mnemo.api.schemas import GroupSummary, ProjectStatus
from mnemo.api.statuses import status_of
from mnemo.client.aio import AsyncMnemoClient
from mnemo.client.errors import NotFoundError, error_for
from mnemo.client.models import AddResult, SearchResults
from mnemo.client.requests import Call, WaitPlan, local_error
from mnemo.client.transport import drive_async
from mnemo.core.engine import Engine
from mnemo.core.granted import Granted
from mnemo.domain.grants import Forbidden, Grant
from mnemo.domain.memory import Run
from mnemo.domain.requests import InvalidRequest, NotFound
from mnemo.domain.transfer import ImportBatch

T = TypeVar("T")
Operation = Callable[..., Awaitable[Any]]


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


def _operations(g: Granted) -> dict[str, Operation]:
    """Each `Call.op` as `g` performs it, answering as the call's `parse` would."""

    async def admit(request: Any, idempotency_key: str | None) -> AddResult:
        run = (await g.admit(request, idempotency_key)).run
        return AddResult(run_id=run.run_id, status=run.status, error=run.error)

    async def search(request: Any) -> SearchResults:
        found = await g.search(request)
        return SearchResults(found, len(found))

    async def list_page(request: Any) -> SearchResults:
        page = await g.list_page(request)
        return SearchResults(page.memories, page.total, page.next_cursor)

    async def list_groups() -> list[GroupSummary]:
        return [GroupSummary.of(group) for group in await g.list_groups()]

    async def erase_user(user_id: str) -> int:
        return (await g.erase_user(user_id)).erased

    async def status() -> dict[str, Any]:
        found = ProjectStatus.of(g.project, await g.failed_runs())
        return found.model_dump(mode="json")

    async def import_batch(body: dict[str, Any]) -> dict[str, Any]:
        try:  # the server would answer 422: the same typed error here
            batch = ImportBatch.model_validate(body)
        except PydanticValidationError as exc:
            raise local_error(exc) from exc
        report = await g.import_batch(batch)
        return report.model_dump(mode="json")

    async def verify() -> None:
        return None  # an Engine in this process needs no key

    return {
        "admit": admit, "search": search, "list_page": list_page, "list_groups": list_groups,
        "erase_user": erase_user, "status": status, "import_batch": import_batch,
        "verify": verify, "get_memory": g.get_memory, "delete_memory": g.delete_memory,
        "memory_history": g.memory_history, "memory_provenance": g.memory_provenance,
        "get_run": g.get_run, "retry_run": g.retry_run, "group": g.group,
        "put_group": g.put_group,
    }  # fmt: skip


class EngineTransport:
    """An `AsyncSender` (mnemo.client.transport) to an Engine in this process, acting
    within `grant`: a read-only or user-bound credential's limits hold here too."""

    def __init__(self, engine: Engine, grant: Grant) -> None:
        self._operations = _operations(Granted(engine, grant))

    async def send(self, call: Call[T]) -> T:
        operation = self._operations[call.op]
        with _typed_errors():
            return cast(T, await operation(**call.args))

    async def drive(self, plan: WaitPlan) -> Run:
        return await drive_async(plan, self.send)

    async def close(self) -> None:
        return None  # the Engine is borrowed: whoever started it stops it


class EngineClient(AsyncMnemoClient):
    """The AsyncMnemoClient API against a borrowed Engine, acting for `project`, or within
    `grant` (a credential's project, read-only flag and bound user)."""

    def __init__(
        self, engine: Engine, *, project: str | None = None, grant: Grant | None = None
    ) -> None:
        self.engine = engine
        self.grant = grant or Grant(project or engine.settings.project)
        self.project = self.grant.project
        self._bind(EngineTransport(engine, self.grant))
