"""The DLQ topic: records a service could not process, with their error.

`payload` is the original record value (text) so `mnemo dlq replay` can re-publish it to
`source_topic` with `key`. Not keyed by scope: replay order is the DLQ's order. `partition`
and `offset` are the failed record's in `source_topic` (not the DLQ's own). `replay_of`
("partition:offset" in the DLQ) marks a record that failed again after that entry's replay.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Reason = Literal["invalid_payload", "llm", "step", "commit"]


class DlqRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    source_topic: str
    partition: int
    offset: int
    key: str | None = None
    payload: str
    service: str
    reason: Reason
    error: str
    run_ids: list[str] = Field(default_factory=list)
    failed_at: datetime
    replay_of: str | None = None
