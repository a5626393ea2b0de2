"""The batch in flight between steps: the raw inputs before extract, candidates after."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import Candidate
from mnemo.domain.reconsolidation import GateDecision


class Batch(BaseModel):
    """Items in flight between steps: the raw inputs before extract, candidates after."""

    batch_id: str
    project: str
    group: str
    scope_key: str
    run_ids: list[str]
    user_id: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    inputs: list[AddInput] = Field(default_factory=list)
    window: list[str] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)
    # The latest event time of the batch's inputs: what a run that extracted nothing counts
    # as in a buffer, and the fallback time of candidates made without one.
    event_time: datetime | None = None
    # The reconsolidation gate's decisions so far; commit records them with the outcome.
    gate: list[GateDecision] = Field(default_factory=list)
    # The extract step whose LLM call transform_with_context makes, combined with its own
    # (`steps.extract_reconcile`); the inputs stay on the batch until then.
    deferred_extract: str | None = None
    # The committed memories that combined call judged: transform_with_context asks only
    # about close memories it did not see.
    reconciled_with: list[str] = Field(default_factory=list)
    # ... and they were every reconcilable memory of the scope: nothing is left to ask.
    reconciled_whole_scope: bool = False

    @property
    def run_id(self) -> str:
        """The run a new candidate is attributed to (the newest in the batch)."""
        return self.run_ids[-1]
