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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo import metrics
from mnemo.core.admission import (
    check_add,
    check_event_times,
    check_group,
    listing_cursor,
    memory_query,
    parse_group,
)
from mnemo.core.dynamics import Dynamics, ScopeState
from mnemo.core.erasure import erase_user
from mnemo.core.failures import is_transient
from mnemo.core.groups import GroupCache, StaleGroup
from mnemo.core.idempotency import Admission, earlier_run, still_contended
from mnemo.core.keyring import KeyRing
from mnemo.core.query_understanding import understand
from mnemo.core.readiness import WriteHealth
from mnemo.core.recall_signals import POOL_DEPTH, recall_weights, rerank
from mnemo.core.records import RunRecord
from mnemo.core.retry import RunRetry
from mnemo.core.run_watch import RunWatch
from mnemo.core.shedding import Shedder
from mnemo.core.supersession import current_first, with_successors
from mnemo.core.transport import RunTransport
from mnemo.domain.erasure import ErasureReport
from mnemo.domain.group import GroupConfig
from mnemo.domain.idempotency import IdempotencyClaim, KeyTaken
from mnemo.domain.memory import Memory, MemoryVersion, Run, RunState
from mnemo.domain.paging import ListCursor, MemoryListing, selection_digest
from mnemo.domain.provenance import Provenance
from mnemo.domain.requests import (
    AddRequest,
    FieldError,
    InvalidRequest,
    ListRequest,
    NotFound,
    SearchRequest,
)
from mnemo.domain.scope import InvalidUserId, normalize_user_id
from mnemo.domain.search import MemoryQuery
from mnemo.settings import Settings
from mnemo.steps.base import Deps
from mnemo.store import browse as browse_store
from mnemo.store import erasure as erasure_store
from mnemo.store import expiry as expiry_store
from mnemo.store import keys, run_activity, runs
from mnemo.store import memories as memory_store
from mnemo.store import neighbours as neighbour_store
from mnemo.store import provenance as provenance_store
from mnemo.store import search as search_store
from mnemo.store.corpus_stats import CorpusStatsCache
from mnemo.store.database import Database
from mnemo.tracing import spans
from mnemo.tracing.memory import memory_span

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Engine:
    settings: Settings
    database: Database
    deps: Deps
    groups: GroupCache
    transport: RunTransport
    corpus_stats: CorpusStatsCache = field(default_factory=CorpusStatsCache)
    key_ring: KeyRing = field(init=False)
    retrier: RunRetry = field(init=False)
    shedder: Shedder = field(init=False)
    dynamics: Dynamics = field(init=False)
    run_watch: RunWatch = field(init=False)
    write_health: WriteHealth = field(default_factory=WriteHealth)

    def __post_init__(self) -> None:
        self.run_watch = RunWatch(self.database.url)
        self.key_ring = KeyRing(self.database.db, self.deps.clock)
        self.retrier = RunRetry(self.database.db, self.transport, self.deps.clock, self.get_run)
        self.shedder = Shedder(self.settings, self.database.db)
        self.dynamics = Dynamics(self.db, self.deps.clock, self.settings)

    async def close(self) -> None:
        """Stop the transport's background work, then the providers and the database."""
        await self.transport.stop()
        await self.run_watch.close()
        await self.dynamics.close()
        await self.deps.aclose()
        await self.database.close()

    # -- groups -------------------------------------------------------------------------
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
                message, [FieldError(location="header.If-Match", message=message)], 412
            ) from None
        if not stored:
            message = (
                f"the project already has {limits.groups_per_project} groups, its limit "
                "(MNEMO_LIMITS_GROUPS_PER_PROJECT); replace an existing group instead"
            )
            raise InvalidRequest(
                message, [FieldError(location="path.name", value=name, message=message)], 422
            )
        return group

    async def delete_group(self, project: str, name: str, force: bool) -> int:
        """Remove a group (and with `force`, its memories); how many memories went. The
        `default` group comes back from the template on its next use."""
        return await self.groups.delete(project, name, force)

    # -- adds and runs ------------------------------------------------------------------
    async def add(
        self, project: str, request: AddRequest, idempotency_key: str | None = None
    ) -> Run:
        """Durably record the add and its run; returns once both are committed."""
        return (await self.admit(project, request, idempotency_key)).run

    async def admit(
        self, project: str, request: AddRequest, idempotency_key: str | None = None
    ) -> Admission:
        """`add`, saying whether an earlier add with the same `idempotency_key` (within the
        window, in this project) had started the run: then nothing new is stored. The run's
        trace starts here (`mnemo.add`) and travels with its record."""
        attributes = {"mnemo.project": project, "mnemo.group": request.group}
        with spans.span("mnemo.add", attributes) as span:
            try:
                admission = await self._admit_in_time(project, request, idempotency_key)
            except Exception as exc:
                if is_transient(exc):
                    self.write_health.failed(exc)
                raise
            self.write_health.succeeded()
            span.set("mnemo.run_id", admission.run.run_id)
            return admission

    async def _admit_in_time(
        self, project: str, request: AddRequest, idempotency_key: str | None
    ) -> Admission:
        """A frozen database would hold the add forever: past MNEMO_ADD_TIMEOUT_SECONDS it is
        a TimeoutError, transient (503, Retry-After) like any outage."""
        limit = self.settings.add_timeout_seconds
        try:
            async with asyncio.timeout(limit):
                return await self._admit(project, request, idempotency_key)
        except TimeoutError as exc:
            raise TimeoutError(
                f"the add was not recorded within {limit:g} s (MNEMO_ADD_TIMEOUT_SECONDS): "
                "the database does not answer"
            ) from exc

    async def _admit(
        self, project: str, request: AddRequest, idempotency_key: str | None
    ) -> Admission:
        started = time.perf_counter()
        for _ in range(3):  # a key can only be lost to an add its transport then refused
            if idempotency_key is not None:
                earlier = await earlier_run(
                    self.db, project, idempotency_key, request, self.deps.clock.now(),
                    self.settings.idempotency_window_seconds,
                )  # fmt: skip
                if earlier is not None:
                    return Admission(earlier, replayed=True)
            try:
                run = await self._submit(project, request, idempotency_key)
            except KeyTaken:
                continue
            metrics.ADD_LATENCY.observe(time.perf_counter() - started)
            metrics.RUNS.labels(status=RunState.running.value).inc()
            return Admission(run)
        assert idempotency_key is not None
        raise still_contended(idempotency_key)

    async def _submit(self, project: str, request: AddRequest, idempotency_key: str | None) -> Run:
        group = await self._group_for_request(project, request.group)
        check_add(group, request, self.settings.limits)
        now = self.deps.clock.now()
        check_event_times(request, now)
        await self.shedder.admit(project)
        record = RunRecord.new(
            run_id=str(uuid.uuid4()),
            project=project,
            group=group.name,
            config=group,
            input=request.input,
            user_id=request.user_id,
            properties=request.properties,
            root=request.root,
            now=now,
            recalled=request.recalled,
        )
        claim = None
        if idempotency_key is not None:
            claim = IdempotencyClaim.new(
                project, idempotency_key, request, record.run_id, now,
                self.settings.idempotency_window_seconds,
            )  # fmt: skip
        await self.dynamics.before_add(project, group.name, record.user_id)
        record = replace(record, trace=spans.carrier())
        await self.transport.submit(record, claim)
        return record.to_run()

    async def get_run(self, project: str, run_id: str) -> Run:
        async with self.db.connect() as conn:
            run = await runs.get(conn, project, run_id)
        if run is None:
            raise NotFound(f"run '{run_id}' not found")
        return await self.dynamics.with_gate(run)

    async def wait_run(self, project: str, run_id: str, timeout: float) -> Run:
        """The run once it is terminal, or as it stands when `timeout` passes. It is read
        again only when a notification says it may have finished (`core.run_watch`)."""
        deadline = time.monotonic() + timeout
        async with self.run_watch.watching(run_id) as changed:
            while True:
                changed.clear()
                run = await self.get_run(project, run_id)
                left = deadline - time.monotonic()
                if run.status.terminal or left <= 0:
                    return run
                try:
                    await asyncio.wait_for(changed.wait(), left)
                except TimeoutError:
                    pass

    async def retry_run(self, project: str, run_id: str) -> Run:
        """Re-drive a failed run from its kept raw input (`core.retry`): 409 if it cannot
        be retried, 503 if the transport did not take it."""
        return await self.retrier(project, run_id)

    # -- memories -----------------------------------------------------------------------
    async def search(self, project: str, request: SearchRequest) -> list[Memory]:
        kind = request.retrieval_config.retrieval_type if request.retrieval_config else "hybrid"
        with memory_span(
            "search_memory", project, request.group, attributes={"mnemo.memory.retrieval": kind}
        ) as span:
            found = await self._search(project, request)
            span.set("mnemo.memory.returned", len(found))
        return found

    async def _search(self, project: str, request: SearchRequest) -> list[Memory]:
        group = await self._group_for_request(project, request.group)
        query = memory_query(project, group, request, self.settings.limits)

        async def embed_query() -> list[float]:
            return (await self.deps.embedder.embed_query([query.text]))[0]

        found = await self._ranked(query, group, embed_query)
        text = None if query.retrieval_type == "fetch" else query.text
        later = await search_store.later_memories(self.db, query, group, found)
        found = current_first(with_successors(found, later, query.limit), text)
        if query.as_of is None:  # a look at the past is not a recall of today's memories
            self.dynamics.recalled(query, group, found)
        return await self.dynamics.with_rules(found) if query.include_consolidated else found

    async def _ranked(
        self,
        query: MemoryQuery,
        group: GroupConfig,
        embed_query: Callable[[], Awaitable[list[float]]],
    ) -> list[Memory]:
        """The store's ranked hits, moved by the recall signals (`core.recall_signals`)
        when any is on: a pool of POOL_DEPTH candidates, cut to the limit after the move."""
        weights = recall_weights(self.settings)
        on = weights.active and query.retrieval_type != "fetch" and bool(query.text.strip())
        found = await search_store.search(
            self.db,
            query,
            group,
            embed_query,
            self.corpus_stats,
            self.settings.hybrid_alpha,
            pool=POOL_DEPTH if on else 0,
        )
        if not on:
            return found
        intent = understand(query.text, query.as_of or self.deps.clock.now())
        near: dict[str, list[str]] = {}
        if weights.context:
            near = await neighbour_store.neighbours(self.db, query, group, [m.id for m in found])
        return rerank(found, query.retrieval_type, intent, near, weights, query.limit)

    async def list_memories(self, project: str, request: ListRequest) -> tuple[list[Memory], int]:
        page = await self.list_page(project, request)
        return page.memories, page.total

    async def list_page(self, project: str, request: ListRequest) -> MemoryListing:
        """A page of the list with the cursor of the next one (`domain.paging`)."""
        with memory_span(
            "search_memory", project, request.group, attributes={"mnemo.memory.retrieval": "list"}
        ) as span:
            listing = await self._list_page(project, request)
            span.set("mnemo.memory.returned", len(listing.memories))
        return listing

    async def _list_page(self, project: str, request: ListRequest) -> MemoryListing:
        group = await self._group_for_request(project, request.group)
        query = memory_query(project, group, request, self.settings.limits)
        cursor = listing_cursor(query, request)
        if cursor is not None:
            query = query.model_copy(update={"as_of": cursor.at})
        at = query.as_of or self.deps.clock.now()  # taken before the page is read
        async with self.db.connect() as conn:
            found, total, more = await memory_store.list_(
                conn, query, group, request.offset, cursor.position if cursor else None
            )
        following = None
        # The cursor stays on the page's last row as read; only the order shown changes.
        if more and found:
            last = found[-1]
            following = ListCursor(
                at=at, updated_at=last.updated_at, id=last.id, selection=selection_digest(query)
            ).encode()
        found = current_first(found)
        if query.include_consolidated:
            found = await self.dynamics.with_rules(found)
        return MemoryListing(found, total, following)

    async def get_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> Memory:
        retrieval = {"mnemo.memory.retrieval": "get"}
        with memory_span(
            "search_memory", project, group, record_id=memory_id, attributes=retrieval
        ):
            g = await self.groups.get(project, group)
            async with self.db.connect() as conn:
                memory = await memory_store.get(conn, project, g, _user(user_id), memory_id)
            if memory is None:
                raise NotFound(f"memory '{memory_id}' not found")
        return memory

    async def delete_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> None:
        with memory_span("delete_memory", project, group, record_id=memory_id):
            g = await self.groups.get(project, group)
            async with self.db.begin() as conn:
                if not await memory_store.archive(
                    conn, project, g, _user(user_id), memory_id, self.deps.clock.now()
                ):
                    raise NotFound(f"memory '{memory_id}' not found")

    async def erase_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> None:
        """Erase one memory with its versions, drafts and buffered copies of its text, and
        the raw input of runs whose only effect was this memory (`store.erasure`)."""
        erase = {"mnemo.memory.erase": True}
        with memory_span("delete_memory", project, group, record_id=memory_id, attributes=erase):
            g = await self.groups.get(project, group)
            async with self.db.begin() as conn:
                if not await erasure_store.erase_memory(
                    conn, project, g, _user(user_id), memory_id, self.deps.clock.now()
                ):
                    raise NotFound(f"memory '{memory_id}' not found")

    async def erase_user(self, project: str, user_id: str) -> ErasureReport:
        """Erase everything of the user in the project and leave a tombstone, so queued,
        in-flight, buffered and replayed data of theirs never comes back (`core.erasure`)."""
        normalized = _user(user_id, "path.user_id")
        if normalized is None:
            raise InvalidRequest(
                "user_id must not be blank",
                [FieldError(location="path.user_id", message="blank user_id")],
            )
        return await erase_user(self.db, self.transport, self.deps.clock, project, normalized)

    async def memory_history(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> list[MemoryVersion]:
        return await self._read_owned(memory_store.history, project, group, user_id, memory_id)

    async def memory_provenance(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> Provenance:
        """Each version of a memory with the run that wrote it (404 like `get_memory`)."""
        return await self._read_owned(
            provenance_store.provenance, project, group, user_id, memory_id
        )

    async def _read_owned(
        self,
        read: Callable[[AsyncConnection, str, GroupConfig, str | None, str], Awaitable[T | None]],
        project: str,
        group: str,
        user_id: str | None,
        memory_id: str,
    ) -> T:
        """What `read` finds about one memory the caller may address; NotFound otherwise."""
        g = await self.groups.get(project, group)
        async with self.db.connect() as conn:
            found = await read(conn, project, g, _user(user_id), memory_id)
        if found is None:
            raise NotFound(f"memory '{memory_id}' not found")
        return found

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

    async def memory_run_ids(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> list[str]:
        """The ids of the runs that wrote a memory, oldest first (its provenance)."""
        return await self._read_owned(browse_store.run_ids, project, group, user_id, memory_id)

    # -- API keys -----------------------------------------------------------------------
    async def create_key(self, project: str, name: str) -> tuple[keys.ApiKey, str]:
        return await self.key_ring.create(project, name)

    async def list_keys(self, project: str | None = None) -> list[keys.ApiKey]:
        return await self.key_ring.list(project)

    async def revoke_key(self, key_id: str) -> bool:
        return await self.key_ring.revoke(key_id)

    async def project_for_key(self, secret: str) -> str | None:
        """The key's project, or None (cached briefly: `core.keyring`)."""
        return await self.key_ring.project_for(secret)

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
                status=422,  # Engram's status for a body naming an unknown group
            ) from exc


def _user(user_id: str | None, location: str = "query.user_id") -> str | None:
    """The caller's user id in its compared form; 422 for one that is refused."""
    try:
        return normalize_user_id(user_id)
    except InvalidUserId as exc:
        raise InvalidRequest(
            "invalid user_id", [FieldError(location=location, message=str(exc))], 422
        ) from exc
