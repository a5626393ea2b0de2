"""The pipeline's spans: a queued record taken up by a worker or stage, and each step it
runs. A record of one run continues that run's trace; a buffer flush of several runs
continues the first one's and links the others, so every run's trace reaches its commit."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager

from mnemo.domain.batch import Batch
from mnemo.domain.pipeline import Step
from mnemo.tracing.spans import AttributeValue, Carrier, Span, span

MAX_RUN_IDS = 32  # attribute size stays bounded for large flushes


def batch_attributes(batch: Batch) -> dict[str, AttributeValue | None]:
    return {
        "mnemo.project": batch.project,
        "mnemo.group": batch.group,
        "mnemo.batch.id": batch.batch_id,
        "mnemo.batch.runs": len(batch.run_ids),
        "mnemo.run_ids": batch.run_ids[:MAX_RUN_IDS],
        "mnemo.batch.candidates": len(batch.candidates),
    }


def step_span(step: Step, batch: Batch) -> AbstractContextManager[Span]:
    """The span of one step applied to `batch`."""
    attributes = {"mnemo.step.id": step.id, "mnemo.step.kind": step.kind}
    return span(f"mnemo.step {step.kind}", {**attributes, **batch_attributes(batch)})


@contextmanager
def record_span(
    name: str, traces: Sequence[Carrier], attributes: Mapping[str, AttributeValue | None]
) -> Iterator[Span]:
    """A consumed record's span: in the trace of its first run (a new trace when it has
    none), linked to the traces of the others."""
    first = traces[0] if traces else {}
    with span(name, attributes, kind="consumer", parent=first, links=traces[1:]) as current:
        yield current


def unique_traces(carriers: Sequence[Carrier | None]) -> list[Carrier]:
    """The distinct non-empty carriers, in order."""
    out: list[Carrier] = []
    for c in carriers:
        if c and c not in out:
            out.append(c)
    return out
