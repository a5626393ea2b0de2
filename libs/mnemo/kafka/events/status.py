"""The run-status topic: run state changes, applied to the `runs` table by the committer.

`in_buffer` comes from the buffer service, `failed` from any service that dead-letters a
record, `completed` from the committer (which already wrote it in the commit transaction),
and `running` from `mnemo dlq replay` to reopen a failed run. Keyed by scope key.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.memory import RunState


class RunStatusEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    run_ids: list[str] = Field(min_length=1)
    status: RunState
    scope_key: str
    at: datetime
    service: str
    error: str | None = None
