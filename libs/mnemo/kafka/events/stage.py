"""The inter-stage channels (`extracted`, `batches`, `drafts`): a batch and the step to run
next.

Which channel carries a StageEvent follows from the kind of `step_id` in the group's pipeline
(buffer -> extracted, transform/transform_with_context -> batches, commit -> drafts), so each
service consumes the records whose next step it executes. Keyed by `batch.scope_key`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.batch import Batch


class StageEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    step_id: str  # the step of `batch.group`'s pipeline that runs next
    batch: Batch
    # When each run of the batch was added: the committer's end-to-end latency.
    run_started: dict[str, datetime] = Field(default_factory=dict)
    # A buffer's pending flush: the trace contexts of its runs (W3C carriers), the first
    # continued by the flush, the others linked (`mnemo.tracing.pipeline`).
    traces: list[dict[str, str]] = Field(default_factory=list)

    @property
    def scope_key(self) -> str:
        """The record's Kafka key: its batch's scope key."""
        return self.batch.scope_key
