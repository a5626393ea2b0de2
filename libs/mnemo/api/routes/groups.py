"""Engram v1 group listing, plus mnemo's group configuration extensions."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Path, Query, Response

from mnemo.api.deps import EngineDep, GrantDep, GrantedDep
from mnemo.api.schemas import ConsolidationStatus, GroupList, GroupSummary
from mnemo.domain.grants import require_project_wide
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import GroupDocument

router = APIRouter(prefix="/v1/groups", tags=["groups"])

GroupName = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-\.]{0,63}$")]


@router.get("", response_model=GroupList)
async def list_groups(granted: GrantedDep) -> GroupList:
    """The project's groups and their topics (the `default` group always exists)."""
    groups = await granted.list_groups()
    return GroupList(groups=[GroupSummary.of(g) for g in groups])


@router.get("/by-name", response_model=GroupSummary)
async def group_by_name(
    granted: GrantedDep, name: Annotated[str, Query(min_length=1)]
) -> GroupSummary:
    """One group as `GET /v1/groups` shows it, by name (Engram's SDK looks groups up so)."""
    return GroupSummary.of(await granted.group(name))


@router.get("/{name}", response_model=GroupConfig, tags=["mnemo extensions"])
async def get_group(name: GroupName, granted: GrantedDep, response: Response) -> GroupConfig:
    """mnemo extension: a group's full configuration, pipeline included. Its `ETag` goes
    into `If-Match` on a later PUT to refuse the save if someone changed it meanwhile."""
    group = await granted.group(name)
    response.headers["ETag"] = group.etag()
    return group


@router.put("/{name}", response_model=GroupConfig, tags=["mnemo extensions"])
async def put_group(
    name: GroupName,
    body: GroupDocument,
    granted: GrantedDep,
    response: Response,
    if_match: Annotated[str | None, Header(max_length=1024)] = None,
) -> GroupConfig:
    """mnemo extension: create or replace a group from `{template}` or `{topics, pipeline}`.

    The document is the JSON equivalent of a group YAML file. With `If-Match` (the ETag of
    a GET, or `*`), the group is replaced only if it is still stored as read: otherwise 412
    and nothing is stored. Without it the last write wins, as Engram clients expect.
    """
    group = await granted.put_group(name, body, if_match)
    response.headers["ETag"] = group.etag()
    return group


@router.delete("/{name}", tags=["mnemo extensions"])
async def delete_group(
    name: GroupName,
    granted: GrantedDep,
    force: Annotated[bool, Query(description="Delete the group's memories with it")] = False,
) -> dict[str, object]:
    """mnemo extension: remove a group. Refused (409) while it holds memories, unless
    `?force=true`, which removes them with it. `default` comes back from the template on
    its next use."""
    deleted = await granted.delete_group(name, force)
    return {"group": name, "deleted": True, "memories_deleted": deleted}


@router.get("/{name}/consolidation", response_model=ConsolidationStatus, tags=["mnemo extensions"])
async def consolidation_status(
    name: GroupName, engine: EngineDep, grant: GrantDep
) -> ConsolidationStatus:
    """mnemo extension: the group's consolidation scopes and their trigger state."""
    require_project_wide(grant, "read consolidation status")
    scopes = await engine.consolidation_scopes(grant.project, name)
    return ConsolidationStatus.model_validate(
        {"group": name, "scopes": scopes}, from_attributes=True
    )
