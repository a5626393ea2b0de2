"""The run record: one constructor for gateway adds, outside adds and refused outside adds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mnemo.core.records import RunRecord
from mnemo.domain.inputs import AddInput
from mnemo.domain.memory import RunState
from mnemo.domain.scope import scope_key
from mnemo.domain.templates import group_from_template

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SAYS = AddInput.model_validate({"string": {"content": ["I like tea"]}})


def test_an_admitted_run_starts_at_its_entry_step_in_its_scope() -> None:
    group = group_from_template("chat", "personalization")
    record = RunRecord.new(
        run_id="r1", project="p", group="chat", config=group, input=SAYS, user_id=" Ana ",
        properties={"conversation_id": "c1", "other": "x"}, root=None, now=NOW,
    )  # fmt: skip
    entry = group.pipeline.entry_for("string", None)
    assert record.status == RunState.running and record.error is None
    assert record.starting_step_id == entry.id
    assert record.starting_step == group.pipeline.index_of(entry.id)
    assert record.user_id == "ana"  # normalized
    assert record.scope_key == scope_key("p", "chat", "ana", {"conversation_id": "c1"},
                                         group.scope_property_keys)  # fmt: skip
    assert record.created_at == record.updated_at == NOW


def test_an_outside_producers_time_dates_the_input_not_the_run() -> None:
    """The run's times are system times (its admission); the producer's time is when the
    input happened, kept on the input where it has no time of its own."""
    group = group_from_template("default", "default")
    earlier = NOW - timedelta(days=300)
    record = RunRecord.new(run_id="r", project="p", group="default", config=group, input=SAYS,
                           user_id="u", properties=None, root=None, now=NOW,
                           input_time=earlier)  # fmt: skip
    assert (record.created_at, record.updated_at) == (NOW, NOW)
    assert record.input.string is not None and record.input.string.created_at == earlier
    batch = record.batch()
    assert batch.event_time == earlier and batch.inputs == [record.input]
    own = AddInput.model_validate(
        {"string": {"content": ["x"], "created_at": "2024-01-02T03:04:05Z"}}
    )
    kept = RunRecord.new(run_id="r", project="p", group="default", config=group, input=own,
                         user_id="u", properties=None, root=None, now=NOW,
                         input_time=earlier)  # fmt: skip
    assert kept.input == own  # its own date wins


def test_an_input_is_dated_at_admission_so_every_retry_sees_the_same_times() -> None:
    group = group_from_template("default", "default")
    record = RunRecord.new(run_id="r", project="p", group="default", config=group, input=SAYS,
                           user_id="u", properties=None, root=None, now=NOW)  # fmt: skip
    assert record.to_row()["raw_input"] == {
        "string": {"content": ["I like tea"], "created_at": "2026-03-01T12:00:00Z"}
    }
    assert RunRecord.from_row(record.to_row()).batch().event_time == NOW


def test_a_refused_run_is_failed_with_its_error_and_keeps_its_input() -> None:
    record = RunRecord.new(
        run_id="r2", project="p", group="nope", config=None, input=SAYS, user_id="U",
        properties={"a": "1"}, root="somewhere", now=NOW, error="NotFound: group 'nope'",
    )  # fmt: skip
    assert record.status == RunState.failed and record.error == "NotFound: group 'nope'"
    assert (record.starting_step, record.starting_step_id) == (0, "somewhere")
    assert record.scope_key == scope_key("p", "nope", "u", {"a": "1"}, ["a"])
    assert record.to_row()["raw_input"]["string"]["content"] == ["I like tea"]


def test_an_admitted_run_needs_its_group() -> None:
    with pytest.raises(ValueError, match="configuration"):
        RunRecord.new(run_id="r", project="p", group="g", config=None, input=SAYS,
                      user_id=None, properties=None, root=None, now=NOW)  # fmt: skip


def test_row_round_trip_and_the_api_view() -> None:
    group = group_from_template("default", "default")
    record = RunRecord.new(run_id="r3", project="p", group="default", config=group,
                           input=SAYS, user_id="u", properties={}, root=None, now=NOW)  # fmt: skip
    row = record.to_row()
    assert row["status"] == "running" and row["committed_operations"] is None
    assert RunRecord.from_row(row) == record
    run = record.to_run()
    assert (run.run_id, run.status, run.group_id, run.input_type) == (
        "r3", RunState.running, "default", "string",
    )  # fmt: skip
