"""mnemo extensions for moving a project: a streamed export and an import as-is."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from mnemo.api.deps import EngineDep, GrantDep, GrantedDep
from mnemo.core.export import export_lines
from mnemo.domain.grants import require_project_wide
from mnemo.domain.transfer import ID_CHARS, ImportBatch, ImportReport

router = APIRouter(prefix="/v1", tags=["mnemo extensions"])
NDJSON = "application/x-ndjson"


@router.get("/export", response_class=StreamingResponse, responses={200: {"content": {NDJSON: {}}}})
async def export_project(
    engine: EngineDep,
    grant: GrantDep,
    after: Annotated[
        str | None,
        Query(max_length=ID_CHARS, description="Resume after this memory id (the last written)"),
    ] = None,
    vectors: Annotated[
        bool, Query(description="Include each memory's and version's vector")
    ] = True,
) -> StreamingResponse:
    """Every memory of the key's project as JSON lines: a `header`, each `group` with its
    configuration, each `memory` (all users, topics and statuses) with its versions, event
    and system times and vector, in id order, then an `end` line. `mnemo export` writes it
    to a file, resumably."""
    require_project_wide(grant, "export the project")
    lines = export_lines(engine, grant.project, after, vectors)
    return StreamingResponse(lines, media_type=NDJSON)


@router.post("/import", response_model=ImportReport)
async def import_project(body: ImportBatch, granted: GrantedDep) -> ImportReport:
    """Write exported groups (created or replaced) and memories (created or replaced, same
    ids and times, nothing extracted again) into the key's project. Vectors are kept when
    `embedding` names this server's model, computed otherwise. Importing a batch twice
    leaves the same state. `mnemo import --memories FILE` sends an export in batches."""
    return await granted.import_batch(body)
