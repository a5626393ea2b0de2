from __future__ import annotations

from datetime import UTC, datetime

from mnemo.console.provenance import VersionView
from mnemo.domain.provenance import RunSource, VersionProvenance

AT = datetime(2026, 12, 1, tzinfo=UTC)


class LabelledRun(RunSource):
    """A run source as the run label makes it (the field the truth helper adds)."""

    produced_by: str | None = None


def _view(run: RunSource | None) -> VersionView:
    version = VersionProvenance(
        version=1, operation="created", content="x", valid_from=AT, run_id="r", run=run
    )
    return VersionView(version, "run", None)


def test_produced_by_reads_the_run_label_where_runs_record_it() -> None:
    kept = {"run_id": "r", "raw_input_state": "retained"}
    assert _view(LabelledRun(**kept, produced_by="offline")).producer == "offline heuristics"
    assert _view(LabelledRun(**kept, produced_by="gpt-4o-mini")).producer == "model gpt-4o-mini"
    assert _view(LabelledRun(**kept)).producer is None  # a run from before labels
    assert _view(RunSource(**kept)).producer is None  # runs without the label at all
    assert _view(None).producer is None  # a consolidation pass or an API delete
