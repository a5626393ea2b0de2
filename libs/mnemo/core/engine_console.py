"""The Engine's reads for the operator console: runs across users, activity per minute,
a run's input, expiry marks and a group's memories across users."""

from __future__ import annotations

from datetime import datetime

from mnemo.core.admission import caller_user as _user
from mnemo.core.engine_groups import EngineGroups
from mnemo.domain.memory import Memory, Run, RunState
from mnemo.domain.requests import FieldError, InvalidRequest, NotFound
from mnemo.store import browse as browse_store
from mnemo.store import expiry as expiry_store
from mnemo.store import run_activity, runs
from mnemo.store.database import Database


class EngineConsoleReads(EngineGroups):
    """Mixed into `Engine` (`mnemo.core.engine`), whose fields these are."""

    database: Database

    async def list_runs(
        self,
        project: str,
        *,
        status: RunState | None = None,
        user_id: str | None = None,
        before: tuple[datetime, str] | None = None,
        limit: int = 50,
    ) -> list[Run]:
        """The project's runs, newest first; `before` is the last (created_at, run_id) seen."""
        async with self.database.db.connect() as conn:
            return await runs.recent(
                conn,
                project,
                status=status,
                user_id=_user(user_id),
                before=before,
                limit=limit,
            )

    async def runs_per_minute(
        self, project: str, since: datetime, until: datetime
    ) -> list[run_activity.MinuteOfRuns]:
        """Runs completed and failed per minute, with add-to-commit p50/p95 (console charts)."""
        async with self.database.db.connect() as conn:
            return await run_activity.per_minute(conn, project, since, until)

    async def get_runs(self, project: str, run_ids: list[str]) -> list[Run]:
        """The project's runs among `run_ids` (others are skipped), newest first."""
        async with self.database.db.connect() as conn:
            return await runs.get_many(conn, project, run_ids)

    async def run_input(self, project: str, run_id: str) -> runs.RunInput:
        async with self.database.db.connect() as conn:
            found = await runs.submitted(conn, project, run_id)
        if found is None:
            raise NotFound(f"run '{run_id}' not found")
        return found

    async def expired_memory_ids(self, project: str, group: str, ids: list[str]) -> set[str]:
        """Which of `ids` have expired (their topic's `ttl_days` / `expire_unrecalled_days`):
        search and list no longer return them; the console marks them."""
        g = await self._group_for_request(project, group)
        async with self.database.db.connect() as conn:
            return await expiry_store.expired_ids(conn, g, ids)

    async def memory_producers(self, project: str, ids: list[str]) -> dict[str, str]:
        """What produced each memory's current version (the run label: a model's name or
        "offline"), for those whose writing run recorded one; the console's badges."""
        async with self.database.db.connect() as conn:
            return await runs.producers_of(conn, project, ids)

    async def browse_memories(
        self,
        project: str,
        group: str,
        *,
        topic: str | None = None,
        user_id: str | None = None,
        properties: dict[str, str] | None = None,
        limit: int = 25,
        offset: int = 0,
    ) -> tuple[list[Memory], int]:
        """A page of a group's memories across the project's users (the console's view)."""
        g = await self._group_for_request(project, group)
        if topic is not None and not g.has_topic(topic):
            raise InvalidRequest(
                f"group '{g.name}' has no topic '{topic}'",
                [FieldError(location="query.topic", value=topic, message="unknown topic")],
            )
        topics = [topic] if topic else [t.name for t in g.topics]
        async with self.database.db.connect() as conn:
            return await browse_store.browse(
                conn,
                project,
                g,
                topics=topics,
                user_id=_user(user_id),
                properties=properties or {},
                limit=limit,
                offset=offset,
            )
