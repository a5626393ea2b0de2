"""The Engine facade: what the gateway, the SDK's embedded client and the CLI call.

It admits adds and hands their runs to a `RunTransport` (the embedded bus or Kafka), and
serves runs, memories, groups and keys from the store. It starts no pipeline itself: the
entry points compose it with a transport (`mnemo.embedded.startup.start_engine`,
`mnemo.kafka.gateway.start_engine`). Its adds (admission, trace, write health) are
`core.engine_adds`, its group methods `core.engine_groups`, the console's reads
`core.engine_console`; this module holds the fields, runs, memories and keys.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from mnemo.core.admission import caller_user as _user
from mnemo.core.admission import listing_cursor, memory_query
from mnemo.core.dynamics import Dynamics, ScopeState
from mnemo.core.engine_adds import EngineAdds
from mnemo.core.engine_console import EngineConsoleReads
from mnemo.core.erasure import erase_user
from mnemo.core.groups import GroupCache
from mnemo.core.keyring import KeyRing
from mnemo.core.query_understanding import understand
from mnemo.core.readiness import WriteHealth
from mnemo.core.recall_signals import POOL_DEPTH, recall_weights, rerank
from mnemo.core.retry import RunRetry
from mnemo.core.run_watch import RunWatch
from mnemo.core.shedding import Shedder
from mnemo.core.supersession import current_first, with_successors
from mnemo.core.transport import RunTransport
from mnemo.deps import Deps
from mnemo.domain.erasure import ErasureReport
from mnemo.domain.grants import Grant
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Memory, MemoryVersion, Run
from mnemo.domain.paging import ListCursor, MemoryListing, selection_digest
from mnemo.domain.provenance import Provenance
from mnemo.domain.requests import (
    FieldError,
    InvalidRequest,
    ListRequest,
    NotFound,
    Refusal,
    SearchRequest,
)
from mnemo.domain.scope import normalize_user_id
from mnemo.domain.search import MemoryQuery
from mnemo.settings import Settings
from mnemo.store import browse as browse_store
from mnemo.store import erasure as erasure_store
from mnemo.store import keys, runs
from mnemo.store import memories as memory_store
from mnemo.store import neighbours as neighbour_store
from mnemo.store import provenance as provenance_store
from mnemo.store import search as search_store
from mnemo.store.corpus_stats import CorpusStatsCache
from mnemo.store.database import Database
from mnemo.store.tenancy import user_known
from mnemo.tracing.memory import memory_span

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Engine(EngineAdds, EngineConsoleReads):
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
        self.retrier = RunRetry(
            self.database.db, self.transport, self.deps.clock, self.get_run, self.groups
        )
        self.shedder = Shedder(self.settings, self.database.db)
        self.dynamics = Dynamics(self.db, self.deps.clock, self.settings)

    async def close(self) -> None:
        """Stop the transport's background work, then the providers and the database."""
        await self.transport.stop()
        await self.run_watch.close()
        await self.dynamics.close()
        await self.deps.aclose()
        await self.database.close()

    # -- runs -----------------------------------------------------------------------
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
            user = _user(user_id)
            async with self.db.connect() as conn:
                memory = await memory_store.get(conn, project, g, user, memory_id)
            if memory is None:
                raise await self._absent(project, user, memory_id)
        return memory

    async def delete_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> None:
        with memory_span("delete_memory", project, group, record_id=memory_id):
            g = await self.groups.get(project, group)
            user = _user(user_id)
            async with self.db.begin() as conn:
                archived = await memory_store.archive(
                    conn, project, g, user, memory_id, self.deps.clock.now()
                )
            if not archived:
                raise await self._absent(project, user, memory_id)

    async def erase_memory(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> None:
        """Erase one memory with its versions, drafts and buffered copies of its text, and
        the raw input of runs whose only effect was this memory (`store.erasure`)."""
        erase = {"mnemo.memory.erase": True}
        with memory_span("delete_memory", project, group, record_id=memory_id, attributes=erase):
            g = await self.groups.get(project, group)
            user = _user(user_id)
            async with self.db.begin() as conn:
                erased = await erasure_store.erase_memory(
                    conn, project, g, user, memory_id, self.deps.clock.now()
                )
            if not erased:
                raise await self._absent(project, user, memory_id)

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
        user = _user(user_id)
        async with self.db.connect() as conn:
            found = await read(conn, project, g, user, memory_id)
        if found is None:  # mnemo's extensions: 404 whoever is named (no 422 as on get)
            raise NotFound(f"memory '{memory_id}' not found")
        return found

    async def _absent(self, project: str, user: str | None, memory_id: str) -> Exception:
        """Why a memory addressed by id was not found, as Engram answers it: 422 when the
        request names a user the project has never seen (Engram: "an unknown user_id on a
        get or delete"), 404 otherwise: the memory is missing, or belongs to another user,
        group or project (never says which, so no memory's existence leaks)."""
        if user is not None:
            async with self.db.connect() as conn:
                known = await user_known(conn, project, user)
            if not known:
                message = f"user '{user}' is unknown in this project"
                return InvalidRequest(
                    message,
                    [FieldError(location="query.user_id", message=message)],
                    Refusal.unprocessable,
                )
        return NotFound(f"memory '{memory_id}' not found")

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

    async def memory_run_ids(
        self, project: str, group: str, user_id: str | None, memory_id: str
    ) -> list[str]:
        """The ids of the runs that wrote a memory, oldest first (its provenance)."""
        return await self._read_owned(browse_store.run_ids, project, group, user_id, memory_id)

    # -- API keys -----------------------------------------------------------------------
    async def create_key(
        self, project: str, name: str, *, writable: bool = True, user_id: str | None = None
    ) -> tuple[keys.ApiKey, str]:
        return await self.key_ring.create(project, name, writable=writable, user_id=user_id)

    async def list_keys(self, project: str | None = None) -> list[keys.ApiKey]:
        return await self.key_ring.list(project)

    async def revoke_key(self, key_id: str) -> bool:
        return await self.key_ring.revoke(key_id)

    async def project_for_key(self, secret: str) -> str | None:
        """The key's project, or None (cached briefly: `core.keyring`)."""
        return await self.key_ring.project_for(secret)

    async def grant_for_key(self, secret: str) -> Grant | None:
        """What the key may do (project, read-only, bound user), or None (cached)."""
        return await self.key_ring.grant_for(secret)

    @property
    def db(self) -> AsyncEngine:
        """The SQLAlchemy handle of the store."""
        return self.database.db
