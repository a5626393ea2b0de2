"""The Engine facade: what the gateway, the SDK's embedded client and the CLI call.

It admits adds and hands their runs to a `RunTransport` (the embedded bus or Kafka), and
serves runs, memories, groups and keys from the store. It starts no pipeline itself: the
entry points compose it with a transport (`mnemo.engine.embedded.start_engine`,
`mnemo.kafka.gateway.start_engine`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo import metrics
from mnemo.core.admission import check_add, memory_query
from mnemo.core.dynamics import Dynamics, ScopeState
from mnemo.core.failures import describe
from mnemo.core.groups import GroupCache
from mnemo.core.records import RunRecord
from mnemo.core.transport import RunTransport, TransportUnavailable
from mnemo.core.ttl_cache import TTLCache
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryVersion, Run, RunState
from mnemo.domain.requests import (
    AddRequest,
    FieldError,
    InvalidRequest,
    ListRequest,
    NotFound,
    SearchRequest,
)
from mnemo.domain.scope import normalize_user_id
from mnemo.domain.templates import group_from_document
from mnemo.settings import Settings
from mnemo.steps.base import Deps
from mnemo.store import browse as browse_store
from mnemo.store import keys, runs
from mnemo.store import memories as memory_store
from mnemo.store import search as search_store
from mnemo.store.corpus_stats import CorpusStatsCache
from mnemo.store.database import Database

log = logging.getLogger(__name__)
KEY_CACHE_SECONDS = 5.0


@dataclass
class Engine:
    settings: Settings
    database: Database
    deps: Deps
    groups: GroupCache
    transport: RunTransport
    corpus_stats: CorpusStatsCache = field(default_factory=CorpusStatsCache)
    _key_cache: TTLCache[str, str | None] = field(
        default_factory=lambda: TTLCache(KEY_CACHE_SECONDS)
    )
    dynamics: Dynamics = field(init=False)

    def __post_init__(self) -> None:
        self.dynamics = Dynamics(self.db, self.deps.clock, self.settings)

    async def close(self) -> None:
        """Stop the transport's background work, then the providers and the database."""
        await self.transport.stop()
        await self.dynamics.close()
        await self.deps.aclose()
        await self.database.close()

    # -- groups -------------------------------------------------------------------------
    async def group(self, project: str, name: str) -> GroupConfig:
        return await self.groups.get(project, name)

    async def list_groups(self, project: str) -> list[GroupConfig]:
        return await self.groups.list(project)

    async def put_group(self, project: str, name: str, document: dict[str, object]) -> GroupConfig:
        try:
            group = group_from_document(name, document)
        except (ValueError, LookupError) as exc:
            raise InvalidRequest(
                f"invalid group configuration: {exc}",
                [FieldError(location="body", message=str(exc))],
            ) from exc
        await self.groups.put(project, group)
        return group

    # -- adds and runs ------------------------------------------------------------------
    async def add(self, project: str, request: AddRequest) -> Run:
        """Durably record the add and its run; returns once both are committed."""
        started = time.perf_counter()
        group = await self._group_for_request(project, request.group)
        check_add(group, request)
        record = RunRecord.new(
            run_id=str(uuid.uuid4()),
            project=project,
            group=group.name,
            config=group,
            input=request.input,
            user_id=request.user_id,
            properties=request.properties,
            root=request.root,
            now=self.deps.clock.now(),
            recalled=request.recalled,
        )
        await self.dynamics.before_add(project, group.name, record.user_id)
        await self.transport.submit(record)
        metrics.ADD_LATENCY.observe(time.perf_counter() - started)
        metrics.RUNS.labels(status=RunState.running.value).inc()
        return record.to_run()

    async def get_run(self, project: str, run_id: str) -> Run:
        async with self.db.connect() as conn:
            run = await runs.get(conn, project, run_id)
        if run is None:
            raise NotFound(f"run '{run_id}' not found")
        return await self.dynamics.with_gate(run)

    async def wait_run(self, project: str, run_id: str, timeout: float) -> Run:
        """The run once it is terminal, or as it stands when `timeout` passes."""
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            run = await self.get_run(project, run_id)
            if run.status.terminal or time.monotonic() >= deadline:
                return run
            await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, 0.25)

    async def retry_run(self, project: str, run_id: str) -> Run:
        """Re-drive a failed run from its kept raw input.

        The run is claimed with one conditional update (failed -> running), so of two
        concurrent retries exactly one proceeds and the other gets 409. If the transport
        does not take the run, it is failed again with its original error and a note, and
        the caller gets 503: a retry never leaves a run `running` with nothing in flight.
        """
        now = self.deps.clock.now()
        claimed: tuple[RunRecord, str | None] | None = None
        try:
            async with self.db.begin() as tx:
                found = await runs.claim_failed(tx, project, run_id, now)
                if found is not None:
                    claimed = (RunRecord.from_row(found[0]), found[1])
                    await self.transport.stage(tx, claimed[0])
        except Exception as exc:
            if claimed is not None:  # the claim rolled back: the run is still failed
                await self._fail_retry(claimed, exc, committed=False)
            raise TransportUnavailable(f"run '{run_id}' was not retried: {describe(exc)}") from exc
        if claimed is None:
            run = await self.get_run(project, run_id)  # NotFound (404) if it does not exist
            raise InvalidRequest(
                f"run '{run_id}' is {run.status.value}; only failed runs retry", status=409
            )
        try:
            await self.transport.publish(claimed[0])
        except Exception as exc:
            await self._fail_retry(claimed, exc, committed=True)
            raise TransportUnavailable(f"run '{run_id}' was not retried: {describe(exc)}") from exc
        return claimed[0].to_run()

    async def _fail_retry(
        self, claimed: tuple[RunRecord, str | None], exc: Exception, committed: bool
    ) -> None:
        record, previous_error = claimed
        try:
            async with self.db.begin() as tx:
                await runs.fail_retry(
                    tx, record.run_id, committed, previous_error, describe(exc, 500),
                    self.deps.clock.now(),
                )  # fmt: skip
        except Exception as note_exc:  # the database is down too: the claim never committed
            log.warning("run %s: retry failure not recorded (%s)", record.run_id, note_exc)

    # -- memories -----------------------------------------------------------------------
    async def search(self, project: str, request: SearchRequest) -> list[Memory]:
        group = await self._group_for_request(project, request.group)
        query = memory_query(project, group, request)

        async def embed_query() -> list[float]:
            return (await self.deps.embedder.embed([query.text]))[0]

        found = await search_store.search(
            self.db,
            query,
            group,
            embed_query,
            self.corpus_stats,
            self.settings.hybrid_alpha,
        )
        self.dynamics.recalled(query, group, found)
        return await self.dynamics.with_rules(found) if query.include_consolidated else found

    async def list_memories(self, project: str, request: ListRequest) -> tuple[list[Memory], int]:
        group = await self._group_for_request(project, request.group)
        query = memory_query(project, group, request)
        async with self.db.connect() as conn:
            found, total = await memory_store.list_(conn, query, group)
        return (
            await self.dynamics.with_rules(found) if query.include_consolidated else found
        ), total

    async def get_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> Memory:
        g = await self.groups.get(project, group)
        async with self.db.connect() as conn:
            memory = await memory_store.get(conn, project, g, normalize_user_id(user_id), memory_id)
        if memory is None:
            raise NotFound(f"memory '{memory_id}' not found")
        return memory

    async def delete_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> None:
        g = await self.groups.get(project, group)
        async with self.db.begin() as conn:
            if not await memory_store.archive(
                conn, project, g, normalize_user_id(user_id), memory_id, self.deps.clock.now()
            ):
                raise NotFound(f"memory '{memory_id}' not found")

    async def erase_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> None:
        g = await self.groups.get(project, group)
        async with self.db.begin() as conn:
            if not await memory_store.erase(
                conn, project, g, normalize_user_id(user_id), memory_id
            ):
                raise NotFound(f"memory '{memory_id}' not found")

    async def erase_user(self, project: str, user_id: str) -> int:
        normalized = normalize_user_id(user_id)
        if normalized is None:
            raise InvalidRequest(
                "user_id must not be blank",
                [FieldError(location="path.user_id", message="blank user_id")],
            )
        async with self.db.begin() as conn:
            return await memory_store.erase_user(conn, project, normalized)

    async def memory_history(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> list[MemoryVersion]:
        g = await self.groups.get(project, group)
        async with self.db.connect() as conn:
            versions = await memory_store.history(
                conn, project, g, normalize_user_id(user_id), memory_id
            )
        if versions is None:
            raise NotFound(f"memory '{memory_id}' not found")
        return versions

    async def memory_sources(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> list[Memory]:
        """The episodes a rule was consolidated from (those the caller may see)."""
        g = await self.groups.get(project, group)
        found = await self.dynamics.sources(project, g, normalize_user_id(user_id), memory_id)
        if found is None:
            raise NotFound(f"memory '{memory_id}' not found")
        return found

    async def consolidation_scopes(self, project: str, group: str) -> list[ScopeState]:
        """A group's consolidation scopes and their trigger state, newest first."""
        g = await self._group_for_request(project, group)
        return await self.dynamics.scopes(project, g.name)

    # -- operator console reads ---------------------------------------------------------
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
                user_id=normalize_user_id(user_id),
                before=before,
                limit=limit,
            )

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
                user_id=normalize_user_id(user_id),
                properties=properties or {},
                limit=limit,
                offset=offset,
            )

    async def memory_run_ids(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> list[str]:
        """The ids of the runs that wrote a memory, oldest first (its provenance)."""
        g = await self.groups.get(project, group)
        async with self.database.db.connect() as conn:
            found = await browse_store.run_ids(
                conn, project, g, normalize_user_id(user_id), memory_id
            )
        if found is None:
            raise NotFound(f"memory '{memory_id}' not found")
        return found

    # -- API keys -----------------------------------------------------------------------
    async def create_key(self, project: str, name: str) -> tuple[keys.ApiKey, str]:
        async with self.db.begin() as conn:
            return await keys.create(conn, project, name, self.deps.clock.now())

    async def list_keys(self, project: str | None = None) -> list[keys.ApiKey]:
        async with self.db.connect() as conn:
            return await keys.list_(conn, project)

    async def revoke_key(self, key_id: str) -> bool:
        async with self.db.begin() as conn:
            revoked = await keys.revoke(conn, key_id, self.deps.clock.now())
        self._key_cache.clear()
        return revoked

    async def project_for_key(self, secret: str) -> str | None:
        """The key's project, or None. Answers are cached for KEY_CACHE_SECONDS, so a key
        revoked by another process stops working within that time (at once in this one)."""

        async def lookup() -> str | None:
            async with self.db.connect() as conn:
                return await keys.project_for(conn, secret)

        return await self._key_cache.get(keys.hash_key(secret), lookup)

    @property
    def db(self) -> AsyncEngine:
        """The SQLAlchemy handle of the store."""
        return self.database.db

    async def _group_for_request(self, project: str, name: str) -> GroupConfig:
        try:
            return await self.groups.get(project, name)
        except NotFound as exc:
            raise InvalidRequest(
                str(exc),
                [FieldError(location="body.group", value=name, message=str(exc))],
                status=404,
            ) from exc
