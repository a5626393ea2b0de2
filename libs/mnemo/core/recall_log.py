"""Recall tracking off the search's hot path: a bounded in-process queue written in batches.

`record` only appends to a deque (a few microseconds) and never waits or fails. A background
task writes the queue to `memory_recalls` every `flush_seconds`, or as soon as `batch_size`
searches are waiting, in one statement per batch; it also prunes recalls older than the
retention once a minute.

Drop policy: the queue holds at most `capacity` searches. When it is full (the database is
slow or down), the OLDEST waiting search is dropped for the new one (the newest recalls are
the ones a labile window still needs) and `mnemo_recalls_dropped_total` counts it. A batch
that fails to write goes back to the front of the queue, within the same bound.

`flush_for` lets an add wait for its own scope's waiting recalls, so a search followed by an
add through the same gateway is always seen by that add's gate.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo import metrics
from mnemo.clock import Clock
from mnemo.store import recalls

log = logging.getLogger(__name__)
PRUNE_EVERY_SECONDS = 60.0

ScopeOf = tuple[str, str, str | None]  # project, group, user_id


@dataclass(frozen=True)
class Recall:
    """One search's results: who searched (project, group, user, scope properties), when,
    and the memory ids it returned."""

    project: str
    group: str
    user_id: str | None
    properties: Mapping[str, str]
    memory_ids: Sequence[str]
    at: datetime

    @property
    def scope(self) -> ScopeOf:
        return (self.project, self.group, self.user_id)

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "project": self.project,
                "group": self.group,
                "user_id": self.user_id,
                "properties": dict(self.properties),
                "memory_id": memory_id,
                "recalled_at": self.at,
            }
            for memory_id in dict.fromkeys(self.memory_ids)
        ]


@dataclass
class RecallLog:
    db: AsyncEngine
    clock: Clock
    capacity: int = 10_000
    flush_seconds: float = 0.5
    retention_seconds: float = 86_400.0
    batch_size: int = 500
    _queue: deque[Recall] = field(default_factory=deque)
    _waiting: Counter[ScopeOf] = field(default_factory=Counter)
    _wake: asyncio.Event | None = None
    _task: asyncio.Task[None] | None = None
    _lock: asyncio.Lock | None = None
    _closed: bool = False
    _pruned_at: float = 0.0

    def record(self, recall: Recall) -> None:
        """Queue one search's recalls. Never blocks, never raises."""
        if self._closed or not recall.memory_ids:
            return
        if len(self._queue) >= self.capacity:
            self._forget(self._queue.popleft())
            metrics.RECALLS_DROPPED.inc()
        self._queue.append(recall)
        self._waiting[recall.scope] += 1
        metrics.RECALL_QUEUE.set(len(self._queue))
        self._ensure_task()
        if len(self._queue) >= self.batch_size and self._wake is not None:
            self._wake.set()

    @property
    def waiting(self) -> int:
        return len(self._queue)

    async def flush_for(self, project: str, group: str, user_id: str | None) -> None:
        """Write the queue now if this scope has recalls waiting in it."""
        if self._waiting.get((project, group, user_id)):
            await self.flush()

    async def flush(self) -> int:
        """Write every waiting recall; returns how many searches were written."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            written = 0
            while self._queue:
                batch = [
                    self._queue.popleft() for _ in range(min(self.batch_size, len(self._queue)))
                ]
                try:
                    async with self.db.begin() as tx:
                        await recalls.insert_rows(tx, [row for r in batch for row in r.rows()])
                except Exception:
                    self._requeue(batch)
                    raise
                for recall in batch:
                    self._forget(recall)
                written += len(batch)
                metrics.RECALLS_RECORDED.inc(len(batch))
            metrics.RECALL_QUEUE.set(len(self._queue))
            return written

    async def close(self) -> None:
        """Stop the background task and write what is waiting (best effort)."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        try:
            await self.flush()
        except Exception as exc:
            log.warning("recall log: %d searches not written at close (%s)", self.waiting, exc)

    def _ensure_task(self) -> None:
        if self._task is None or self._task.done():
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="recall-log")

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.flush_seconds)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self.flush()
                await self._prune()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database is down: keep the queue, try again
                log.warning("recall log: write failed (%s); %d waiting", exc, self.waiting)

    async def _prune(self) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() - self._pruned_at < PRUNE_EVERY_SECONDS:
            return
        self._pruned_at = loop.time()
        before = self.clock.now() - timedelta(seconds=self.retention_seconds)
        async with self.db.begin() as tx:
            await recalls.prune(tx, before)

    def _requeue(self, batch: list[Recall]) -> None:
        for recall in reversed(batch):
            if len(self._queue) >= self.capacity:
                self._forget(recall)
                metrics.RECALLS_DROPPED.inc()
                continue
            self._queue.appendleft(recall)

    def _forget(self, recall: Recall) -> None:
        self._waiting[recall.scope] -= 1
        if self._waiting[recall.scope] <= 0:
            del self._waiting[recall.scope]
