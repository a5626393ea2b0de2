"""The bus contract.

Records travel on named channels and are keyed by scope key. Records of one scope are
delivered strictly in publish order, and a record is handed to one consumer at a time;
different scopes are delivered concurrently.
A record counts as done only when it is acknowledged, so a consumer that dies mid-record
leaves it for the next one (at-least-once); effects must therefore be idempotent, or, as in
the embedded bus, committed in the same transaction as the acknowledgement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

# Record kinds on the pipeline channel.
RUN = "run"  # an add: {"run_id"}
FLUSH = "flush"  # a buffer flush: {"flush_id", "group", "step_id", "run_ids", "items", ...}
# A consolidation check of one scope, keyed by the scope's own key: {"scope", "run_ids": []}
CONSOLIDATE = "consolidate"

PIPELINE_CHANNEL = "pipeline"


@dataclass(frozen=True)
class Record:
    id: int
    channel: str
    scope_key: str
    payload: dict[str, Any]


class Bus(Protocol):
    async def publish(self, tx: Any, channel: str, scope_key: str, payload: dict[str, Any]) -> None:
        """Publish inside the caller's transaction `tx`: it is durable when `tx` commits."""

    async def claim(self, tx: Any, channels: tuple[str, ...]) -> Record | None:
        """Take the oldest record of some scope that has no earlier unacknowledged record.

        The claim lasts as long as `tx`; if the consumer dies, `tx` aborts and the record
        becomes claimable again.
        """

    async def ack(self, tx: Any, record: Record) -> None:
        """Mark the record done; takes effect when `tx` commits."""

    def wake(self, count: int = 1) -> None:
        """Call after committing a transaction that published `count` records: wakes that
        many idle local consumers (other processes are told by the database)."""
