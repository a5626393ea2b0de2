"""The extractor's sliding windows as a table of partition-tagged values (pure parts)."""

from __future__ import annotations

from typing import Any

from mnemo.kafka.stages import windows as sliding


def test_a_slide_records_the_partition_and_gives_the_earlier_units() -> None:
    table: dict[str, Any] = {}
    assert sliding.slide_into(table, "k", "r1", ["a"], 2, partition=3) == []
    assert sliding.slide_into(table, "k", "r2", ["b"], 2, partition=3) == ["a"]
    assert sliding.slide_into(table, "k", "r3", ["c"], 2, partition=3) == ["a", "b"]
    assert table["k"] == {
        "partition": 3,
        "entries": [{"run_id": "r2", "units": ["b"]}, {"run_id": "r3", "units": ["c"]}],
    }


def test_gone_runs_give_no_context_and_are_dropped_from_the_window() -> None:
    table: dict[str, Any] = {}
    sliding.slide_into(table, "k", "r1", ["secret"], 3, partition=0)
    context = sliding.slide_into(table, "k", "r2", ["b"], 3, partition=0, gone={"r1"})
    assert context == [] and sliding.runs_held(table, 0) == {"r2"}


def test_a_sweep_touches_only_its_partition_and_deletes_emptied_windows() -> None:
    table: dict[str, Any] = {}
    sliding.slide_into(table, "a", "r1", ["x"], 3, partition=0)
    sliding.slide_into(table, "a", "r2", ["y"], 3, partition=0)
    sliding.slide_into(table, "b", "r3", ["z"], 3, partition=0)
    sliding.slide_into(table, "c", "r1", ["x"], 3, partition=1)
    assert sliding.drop_runs(table, 0, {"r1", "r3"}) == 2
    assert set(table) == {"a", "c"}
    assert [e.run_id for e in sliding.entries(table["a"])] == ["r2"]
    assert [e.run_id for e in sliding.entries(table["c"])] == ["r1"]  # another partition's


def test_values_from_before_partitions_were_kept_are_read() -> None:
    old = [{"run_id": "r1", "units": ["u"]}]
    table: dict[str, Any] = {"k": old}
    assert [e.run_id for e in sliding.entries(old)] == ["r1"]
    assert sliding.runs_held(table, 0) == set()  # swept at the scope's next add instead
    assert sliding.slide_into(table, "k", "r2", ["v"], 3, partition=0, gone={"r1"}) == []
