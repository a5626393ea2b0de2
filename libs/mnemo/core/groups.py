"""Group lookup with a short-lived cache; the `default` group is created on first use."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.core.ttl_cache import TTLCache
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import FieldError, InvalidRequest, NotFound, Refusal
from mnemo.domain.templates import group_from_template
from mnemo.errors import MnemoError
from mnemo.store import groups as group_store

log = logging.getLogger(__name__)

DEFAULT_GROUP = "default"
_TTL_SECONDS = 2.0


class StaleGroup(MnemoError):
    """A conditional save's If-Match names a configuration that is no longer stored."""

    def __init__(self, current: GroupConfig | None) -> None:
        super().__init__("the group changed since it was read")
        self.current = current


def etag_matches(if_match: str, group: GroupConfig | None) -> bool:
    """RFC 9110 If-Match with strong comparison: `*` or a list of quoted tags."""
    if group is None:
        return False
    tags = {t.strip() for t in if_match.split(",")}
    return "*" in tags or group.etag() in tags


class GroupCache:
    """`default_template` (None: the built-in `default`) shapes each project's default group
    when it is first created; an existing default group is kept whatever it was made from."""

    def __init__(self, db: AsyncEngine, clock: Clock, default_template: str | None = None) -> None:
        self.db = db
        self.clock = clock
        self.default_template = default_template
        self._cache: TTLCache[tuple[str, str], GroupConfig] = TTLCache(_TTL_SECONDS)
        # When each cached group was stored: a caller who knows of a later save reloads.
        self._stored_at: dict[tuple[str, str], datetime] = {}
        self._reported: set[str] = set()  # projects whose default group was logged

    async def get(
        self, project: str, name: str, stored_since: datetime | None = None
    ) -> GroupConfig:
        """The group; with `stored_since` (when the group was last stored, as a run's row
        read it), never a cached configuration older than that: another process changed
        the group within the cache's TTL, and the run must go through the group as is."""
        key = (project, name)
        known = self._stored_at.get(key)
        if stored_since is not None and (known is None or known < stored_since):
            self._cache.forget(key)
        return await self._cache.get(key, lambda: self._load(project, name))

    async def ensure_default(self, project: str) -> tuple[GroupConfig, bool]:
        """The project's default group, and whether this call created it."""
        async with self.db.begin() as conn:
            stamped = await group_store.get_stamped(conn, project, DEFAULT_GROUP)
            created = False
            if stamped is None:
                template = group_from_template(DEFAULT_GROUP, self.default_template or "default")
                now = self.clock.now()
                created = await group_store.create_if_absent(conn, project, template, now)
                stamped = (
                    (template, now)
                    if created
                    else await group_store.get_stamped(conn, project, DEFAULT_GROUP)
                )
        assert stamped is not None
        group, self._stored_at[(project, DEFAULT_GROUP)] = stamped
        if project not in self._reported:  # once per project and process, not per reload
            self._reported.add(project)
            log.info(default_group_status(project, group, created, self.default_template))
        self._cache.put((project, DEFAULT_GROUP), group)
        return group, created

    async def _load(self, project: str, name: str) -> GroupConfig:
        if name == DEFAULT_GROUP:
            return (await self.ensure_default(project))[0]
        async with self.db.connect() as conn:
            stamped = await group_store.get_stamped(conn, project, name)
        if stamped is None:
            raise NotFound(f"group '{name}' does not exist in this project")
        group, self._stored_at[(project, name)] = stamped
        return group

    async def put(
        self,
        project: str,
        group: GroupConfig,
        max_groups: int | None = None,
        if_match: str | None = None,
    ) -> bool:
        """Create or replace `group`; False (nothing stored) when it would be a new group
        beyond `max_groups` in the project. With `if_match` (an If-Match header's value) the
        stored group must still carry one of its tags, checked with its row locked: else
        StaleGroup and nothing is stored (two editors cannot both win)."""
        async with self.db.begin() as conn:
            if if_match is not None:
                current = await group_store.get_for_update(conn, project, group.name)
                if not etag_matches(if_match, current):
                    raise StaleGroup(current)
            now = self.clock.now()
            if not await group_store.put(conn, project, group, now, max_groups):
                return False
        self._cache.put((project, group.name), group)
        self._stored_at[(project, group.name)] = now
        return True

    async def delete(self, project: str, name: str, force: bool) -> int:
        """Remove the group; the number of memories removed with it. Refused (409) while
        it holds memories unless `force`. Other processes' caches let go within the TTL."""
        async with self.db.begin() as conn:
            if await group_store.get(conn, project, name) is None:
                raise NotFound(f"group '{name}' does not exist in this project")
            held = await group_store.memory_count(conn, project, name)
            if held and not force:
                message = (
                    f"group '{name}' holds {held} memories; delete them with it "
                    "(?force=true) or keep the group"
                )
                raise InvalidRequest(
                    message, [FieldError(location="query.force", value=False, message=message)],
                    kind=Refusal.conflict,
                )  # fmt: skip
            await group_store.delete(conn, project, name)
        self._cache.forget((project, name))
        self._stored_at.pop((project, name), None)
        return held

    async def list(self, project: str) -> list[GroupConfig]:
        await self.get(project, DEFAULT_GROUP)
        async with self.db.connect() as conn:
            return await group_store.list_(conn, project)


def default_group_status(
    project: str, group: GroupConfig, created: bool, requested: str | None
) -> str:
    """One line for logs and `mnemo serve`: what the project's default group is made from."""
    made_from = f"template '{group.template}'" if group.template else "a custom configuration"
    if created:
        return f"project '{project}': created the default group from {made_from}"
    if requested and group.template != requested:
        return (
            f"project '{project}': kept the existing default group ({made_from}); template "
            f"'{requested}' applies only when a default group is first created "
            "(replace it with PUT /v1/groups/default)"
        )
    return f"project '{project}': default group from {made_from}"
