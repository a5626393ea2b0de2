"""Routing by pipeline: the kind of the step that runs next decides the channel."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel

from mnemo.domain.batch import Batch
from mnemo.domain.pipeline import BufferStep, Step
from mnemo.errors import MnemoError
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.stage import StageEvent

# Which step kinds each stage service executes itself.
EXTRACTOR_KINDS = frozenset({"extract"})
TRANSFORMER_KINDS = frozenset({"transform"})
# transform_with_context reads committed memories, so it runs in the committer, right before
# the commit, in the scope's partition order: run N+1 reconciles against run N's commit.
COMMITTER_LEAD_KINDS = frozenset({"transform_with_context", "transform"})


@dataclass(frozen=True)
class Emit:
    """One record to publish: its channel, its key (a scope key) and its value."""

    kind: ChannelKind
    scope_key: str
    record: BaseModel


class UnroutableStep(MnemoError, ValueError):
    """A step that no stage service can receive from another stage."""


def channel_for(step: Step) -> ChannelKind:
    """The channel whose consumer executes `step`."""
    if isinstance(step, BufferStep):
        if step.mode == "sliding_window":
            raise UnroutableStep(
                f"sliding-window buffer '{step.id}' must be an entry step (the extractor runs it)"
            )
        return ChannelKind.extracted
    if step.kind in TRANSFORMER_KINDS:
        return ChannelKind.batches
    if step.kind in ("commit", "transform_with_context"):
        return ChannelKind.drafts
    raise UnroutableStep(f"step '{step.id}' ({step.kind}) can only start a run")


def forward(step: Step | None, batch: Batch, run_started: dict[str, datetime]) -> list[Emit]:
    """The record that hands `batch` to `step` (none when the pipeline has ended)."""
    if step is None:
        return []
    event = StageEvent(step_id=step.id, batch=batch, run_started=run_started)
    return [Emit(channel_for(step), batch.scope_key, event)]
