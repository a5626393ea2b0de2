"""Memory operation spans after OpenTelemetry's GenAI semantic conventions for memory
(development stability; proposed in open-telemetry/semantic-conventions pull request 3250,
not yet in a release when this was written): `search_memory {store}`, `update_memory
{store}` and `delete_memory {store}`, beside the pipeline's spans of the same trace.

Attributes: `gen_ai.operation.name`, `gen_ai.provider.name` ("mnemo"),
`gen_ai.memory.store.id` (`{project}/{group}`: a group is the store an agent writes to and
searches), `gen_ai.memory.record.id` when one record is addressed, `error.type` on failure.
The opt-in attributes that carry content (`gen_ai.memory.query.text`,
`gen_ai.memory.records`) are never recorded: they hold users' data, as prompts do
(`mnemo.tracing.genai`). mnemo's own counts are `mnemo.memory.*`.

The convention gives these spans kind CLIENT, written from the caller's side of a memory
provider's API. mnemo is the provider: its spans are INTERNAL, children of the caller's
span when the request carries `traceparent` (`mnemo.api.tracing`), and of the commit
step's span for `update_memory`, so a caller's CLIENT span stays the one outgoing call.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Literal

from mnemo.tracing.spans import AttributeValue, Span, span

PROVIDER = "mnemo"
Operation = Literal["search_memory", "update_memory", "delete_memory"]


def store_id(project: str, group: str) -> str:
    return f"{project}/{group}"


def memory_span(
    operation: Operation,
    project: str,
    group: str,
    *,
    record_id: str | None = None,
    attributes: Mapping[str, AttributeValue | None] | None = None,
) -> AbstractContextManager[Span]:
    """The span of one memory operation on the store `project/group`."""
    store = store_id(project, group)
    return span(
        f"{operation} {store}",
        {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.memory.store.id": store,
            "gen_ai.memory.record.id": record_id,
            **(attributes or {}),
        },
    )
