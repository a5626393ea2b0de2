"""The Engine's group methods: read, create or replace (with If-Match), delete, and the
group a request names (refused as the request's own error when it does not exist)."""

from __future__ import annotations

from mnemo.core.admission import check_group, parse_group
from mnemo.core.groups import GroupCache, StaleGroup
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import FieldError, InvalidRequest, NotFound, Refusal
from mnemo.settings import Settings


class EngineGroups:
    """Mixed into `Engine` (`mnemo.core.engine`), whose fields these are."""

    settings: Settings
    groups: GroupCache

    async def group(self, project: str, name: str) -> GroupConfig:
        return await self.groups.get(project, name)

    async def list_groups(self, project: str) -> list[GroupConfig]:
        return await self.groups.list(project)

    async def put_group(
        self, project: str, name: str, document: dict[str, object], if_match: str | None = None
    ) -> GroupConfig:
        """Create or replace a group. With `if_match`, only while the stored configuration
        still has that ETag (`GroupConfig.etag`): else 412 and nothing is stored."""
        group = parse_group(name, document)
        limits = self.settings.limits
        check_group(group, limits)
        try:
            stored = await self.groups.put(project, group, limits.groups_per_project, if_match)
        except StaleGroup as exc:
            message = (
                f"group '{name}' was changed since it was read (If-Match {if_match} no longer "
                "matches"
                + (f"; it is now {exc.current.etag()}" if exc.current else "; it does not exist")
                + "); read it again and reapply the change"
            )
            raise InvalidRequest(
                message, [FieldError(location="header.If-Match", message=message)], Refusal.stale
            ) from None
        if not stored:
            message = (
                f"the project already has {limits.groups_per_project} groups, its limit "
                "(MNEMO_LIMITS_GROUPS_PER_PROJECT); replace an existing group instead"
            )
            raise InvalidRequest(
                message,
                [FieldError(location="path.name", value=name, message=message)],
                Refusal.unprocessable,
            )
        return group

    async def delete_group(self, project: str, name: str, force: bool) -> int:
        """Remove a group (and with `force`, its memories); how many memories went. The
        `default` group comes back from the template on its next use."""
        return await self.groups.delete(project, name, force)

    async def _group_for_request(self, project: str, name: str) -> GroupConfig:
        try:
            return await self.groups.get(project, name)
        except NotFound as exc:
            raise InvalidRequest(
                str(exc),
                [FieldError(location="body.group", value=name, message=str(exc))],
                kind=Refusal.unprocessable,  # Engram's status for a body naming an unknown group
            ) from exc
