"""The dead-letter queue of the distributed mode, limited to the caller's project.

The DLQ topic is shared by every project, so an entry is shown only when one of its runs
belongs to the caller's project; entries without such a run are counted, not shown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemo.api.deps import EngineDep, SettingsDep
from mnemo.console.errors import ConsoleRoute
from mnemo.console.rendering import render
from mnemo.console.session import SessionDep
from mnemo.domain.grants import require_project_wide
from mnemo.domain.memory import Run
from mnemo.domain.requests import NotFound
from mnemo.settings import Settings

router = APIRouter(route_class=ConsoleRoute)

READ_TIMEOUT_SECONDS = 15.0
MAX_SHOWN = 200


@dataclass(frozen=True)
class ProjectDlq:
    entries: list[tuple[Any, list[Run]]]  # (DlqEntry, the project's runs in it), newest first
    hidden: int  # entries of other projects or without runs


async def read_dlq(settings: Settings) -> list[Any]:
    """Every DLQ entry, oldest first, from the channels the gateway publishes to (its
    settings' Kafka section)."""
    try:
        from mnemo.kafka.dlqops import list_dlq
    except ImportError as exc:  # pragma: no cover - distributed mode installs the extra
        raise RuntimeError("the DLQ needs the kafka extra: pip install 'mnemo[kafka]'") from exc
    return await asyncio.wait_for(list_dlq(settings.kafka), READ_TIMEOUT_SECONDS)


async def project_dlq(engine: EngineDep, project: str, entries: list[Any]) -> ProjectDlq:
    run_ids = sorted({i for e in entries for i in e.record.run_ids})
    runs = {r.run_id: r for r in await engine.get_runs(project, run_ids)}
    shown = []
    for entry in reversed(entries):
        mine = [runs[i] for i in entry.record.run_ids if i in runs]
        if mine:
            shown.append((entry, mine))
    return ProjectDlq(shown[:MAX_SHOWN], len(entries) - len(shown))


@router.get("/dlq")
async def dlq_page(
    request: Request, session: SessionDep, engine: EngineDep, settings: SettingsDep
) -> Response:
    require_project_wide(session.access, "read the dead-letter queue")
    if settings.mode != "distributed":
        raise NotFound("the DLQ exists only in distributed mode (MNEMO_MODE=distributed)")
    error = None
    dlq = ProjectDlq([], 0)
    try:
        dlq = await project_dlq(engine, session.project, await read_dlq(settings))
    except Exception as exc:  # broker down, timeout, missing extra: say so on the page
        error = f"could not read the DLQ: {type(exc).__name__}: {exc}"
    return render(request, "dlq.html", session, {"dlq": dlq, "error": error})
