"""The run record: one add as the `runs` table keeps it, built in one place.

An add through the gateway, an add an outside producer published to the raw topic, and an
outside add the pipeline refused all become a `RunRecord` through `RunRecord.new`, so their
rows cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mnemo.domain.batch import Batch
from mnemo.domain.event_time import dated, input_time
from mnemo.domain.group import GroupConfig
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import Run, RunState
from mnemo.domain.scope import normalize_user_id, scope_key
from mnemo.store.runs import run_from_row


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    project: str
    group: str
    input_type: str
    starting_step: int
    starting_step_id: str
    user_id: str | None
    properties: dict[str, str]
    scope_key: str
    status: RunState
    input: AddInput
    created_at: datetime
    updated_at: datetime
    error: str | None = None
    committed_operations: dict[str, Any] | None = field(default=None, compare=False)
    # The memory ids the add named as recalled (reconsolidation), if it named any.
    recalled: list[str] | None = None
    # The trace context of the add (or retry) that queued it, as a W3C carrier: the
    # transport carries it to the pipeline (`mnemo.tracing`). Not stored in the row.
    trace: dict[str, str] = field(default_factory=dict, compare=False)

    @classmethod
    def new(
        cls,
        *,
        run_id: str,
        project: str,
        group: str,
        config: GroupConfig | None,
        input: AddInput,
        user_id: str | None,
        properties: Mapping[str, str] | None,
        root: str | None,
        now: datetime,
        input_time: datetime | None = None,
        error: str | None = None,
        recalled: list[str] | None = None,
    ) -> RunRecord:
        """A new run of `group` (whose configuration is `config`, if it could be loaded),
        admitted `now` (its `created_at`, a system time).

        Without `error` the run starts `running` at its pipeline's entry step for the input
        (or `root`). With `error` it was refused before entering the pipeline: it is
        `failed` with that error, at step 0, and keeps its input for a retry.

        The input is kept dated (`domain.event_time.dated`): containers without a time get
        `input_time` (an outside producer's raw-event time), else `now`.
        """
        user = normalize_user_id(user_id)
        props = dict(properties or {})
        if error is None:
            if config is None:
                raise ValueError("an admitted run needs its group's configuration")
            entry = config.pipeline.entry_for(input.input_type, root)
            step, step_id = config.pipeline.index_of(entry.id), entry.id
        else:
            step, step_id = 0, root or ""
        # Unknown group: every property counts towards the scope (the record's key).
        scoped_by = config.scope_property_keys if config is not None else props.keys()
        return cls(
            run_id=run_id,
            project=project,
            group=group,
            input_type=input.input_type,
            starting_step=step,
            starting_step_id=step_id,
            user_id=user,
            properties=props,
            scope_key=scope_key(project, group, user, props, scoped_by),
            status=RunState.running if error is None else RunState.failed,
            input=dated(input, input_time or now),
            created_at=now,
            updated_at=now,
            error=error,
            recalled=list(dict.fromkeys(recalled)) if recalled is not None else None,
        )

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> RunRecord:
        return cls(
            run_id=row["run_id"],
            project=row["project"],
            group=row["group"],
            input_type=row["input_type"],
            starting_step=row["starting_step"],
            starting_step_id=row["starting_step_id"],
            user_id=row["user_id"],
            properties=dict(row["properties"] or {}),
            scope_key=row["scope_key"],
            status=RunState(row["status"]),
            input=AddInput.model_validate(row["raw_input"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            error=row["error"],
            committed_operations=row["committed_operations"],
            recalled=row.get("recalled"),
        )

    def to_row(self) -> dict[str, Any]:
        """The `runs` row (column -> value)."""
        return {
            "run_id": self.run_id,
            "project": self.project,
            "group": self.group,
            "input_type": self.input_type,
            "starting_step": self.starting_step,
            "starting_step_id": self.starting_step_id,
            "user_id": self.user_id,
            "properties": self.properties,
            "scope_key": self.scope_key,
            "status": self.status.value,
            "raw_input": self.input.model_dump(mode="json", exclude_none=True),
            "committed_operations": self.committed_operations,
            "error": self.error,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "recalled": self.recalled,
        }

    def batch(self) -> Batch:
        """The batch the run starts as: its input, dated (a row kept before inputs were
        dated at admission takes its admission time), in its scope."""
        raw = dated(self.input, self.created_at)
        return Batch(
            batch_id=self.run_id,
            project=self.project,
            group=self.group,
            scope_key=self.scope_key,
            run_ids=[self.run_id],
            user_id=self.user_id,
            properties=self.properties,
            inputs=[raw],
            event_time=input_time(raw, self.created_at),
        )

    def to_run(self) -> Run:
        """The run as the API reports it."""
        return run_from_row(self.to_row())
