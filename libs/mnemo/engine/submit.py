"""Handing an acknowledged add to the pipeline.

The contract: `submit` returns only when the run row and its raw input are durable and the
pipeline will pick the run up; if it raises, nothing of the run may remain. The embedded
default writes both to Postgres in one transaction; the distributed mode publishes to Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.bus.base import PIPELINE_TOPIC, RUN
from mnemo.bus.postgres import PostgresBus
from mnemo.store import runs


class RunSubmitter(Protocol):
    async def submit(self, row: Mapping[str, Any]) -> None:
        """Durably record a new run (a `runs` row) and enqueue it."""
        ...

    async def resubmit(self, row: Mapping[str, Any]) -> None:
        """Enqueue an existing (failed) run again from its kept raw input."""
        ...


class PostgresSubmitter:
    def __init__(self, db: AsyncEngine, bus: PostgresBus) -> None:
        self.db = db
        self.bus = bus

    async def submit(self, row: Mapping[str, Any]) -> None:
        async with self.db.begin() as tx:
            await runs.create(tx, row)
            await self.bus.publish(
                tx, PIPELINE_TOPIC, row["scope_key"], {"kind": RUN, "run_id": row["run_id"]}
            )

    async def resubmit(self, row: Mapping[str, Any]) -> None:
        async with self.db.begin() as tx:
            await self.bus.publish(
                tx, PIPELINE_TOPIC, row["scope_key"], {"kind": RUN, "run_id": row["run_id"]}
            )
