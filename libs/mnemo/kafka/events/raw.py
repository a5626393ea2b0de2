"""The raw topic (`{prefix}.raw.v1`): one add per record. This schema is public.

Outside producers may publish conversation events here directly, without the gateway:

    value (JSON, UTF-8):
      {
        "schema_version": 1,
        "project": "default",              # the project the memories belong to
        "group": "default",                # the group whose pipeline runs
        "user_id": "alice",                # required by user-scoped topics; case-folded
        "properties": {"conversation_id": "c1"},  # the group's scope properties
        "input": {"conversation": {"messages": [{"role": "user", "content": "..."}]}},
        "root": null,                      # optional: start at this step id
        "run_id": null,                    # optional: omit and the extractor derives one
        "created_at": "2026-01-01T00:00:00Z",  # optional: when the input happened
        "recalled": ["<memory id>", ...]   # optional: memories the agent used (reconsolidation)
      }                                    # ("origin" is the gateway's; leave it out)
    key: the scope key, `RawEvent.scope_key_for(scope_property_keys)` (any stable key per scope
         keeps order; the scope key also keeps the same partition as gateway adds).

`input` is the Engram v1 add input: exactly one of `string`, `conversation` or
`pre_extracted`. `created_at` is the input's event time: it dates the input's containers
that carry no `created_at` of their own (messages may carry theirs); without it they happened
when the extractor admits the record. The run's own `created_at` is always its admission. A record without `run_id` gets a deterministic one from its topic,
partition and offset, so a redelivery never makes a second run; the extractor creates its
run row the first time it sees it (its `created_at` is that admission time, as for an add
through the gateway), and `GET /v1/runs/{run_id}` tracks it like any add.
Invalid records go to the DLQ with their error (and their run, if any, is marked failed).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.inputs import AddInput
from mnemo.domain.scope import UserId, normalize_user_id, scope_key

_RUN_NAMESPACE = uuid.UUID("0b6c9f3e-3d8a-4f7e-9a51-2f4c8e1d7a90")


class RawEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    run_id: str | None = Field(default=None, min_length=1, max_length=128)
    project: str = Field(default="default", min_length=1, max_length=128)
    group: str = Field(default="default", min_length=1, max_length=64)
    user_id: UserId | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    input: AddInput
    root: str | None = None
    created_at: datetime | None = None
    recalled: list[str] | None = Field(default=None, max_length=100)
    # Set by the gateway, whose run row always exists before the record is produced: a
    # gateway record without a row was refused (503) and is dropped. Outside producers omit it.
    origin: Literal["gateway", "external"] = "external"

    def scope_key_for(self, scope_property_keys: Iterable[str]) -> str:
        """The record's Kafka key: the scope key of this add in a group scoped by these
        properties."""
        return scope_key(
            self.project,
            self.group,
            normalize_user_id(self.user_id),
            self.properties,
            scope_property_keys,
        )


def derived_run_id(topic: str, partition: int, offset: int) -> str:
    """The run id of a raw record published without one: stable across redeliveries."""
    return str(uuid.uuid5(_RUN_NAMESPACE, f"{topic}:{partition}:{offset}"))


def replay_run_id(into_group: str, run_id: str) -> str:
    """The run id of `run_id` re-run into `into_group`: a repeated replay adds no run."""
    return str(uuid.uuid5(_RUN_NAMESPACE, f"replay:{into_group}:{run_id}"))
