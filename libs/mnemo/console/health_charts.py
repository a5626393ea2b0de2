"""The pipeline-health charts of the last hour.

Runs completed and failed per minute and their add-to-commit latency come from the runs
table (the project's own runs, on record from before this process started); LLM calls and
errors, backlog and Kafka lag come from the gateway's metrics, sampled into an hour-long
ring buffer (`console.sampler`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from markupsafe import Markup

from mnemo.console.charts import Chart, Series, line_chart
from mnemo.console.metrics_view import MetricsHistory, Snapshot, Window
from mnemo.core.engine import Engine

HOUR = timedelta(hours=1)
BACKLOG_PREFIXES = ("mnemo_backlog_", "mnemo_buffer_items", "mnemo_buffered_runs", "mnemo_kafka_")
MAX_BACKLOG_SERIES = 8


def _at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


async def run_charts(engine: Engine, project: str, now: datetime) -> list[Chart]:
    minutes = await engine.runs_per_minute(project, now - HOUR, now)
    middle = timedelta(seconds=30)  # a minute's value is drawn at its middle
    completed = [(m.minute + middle, float(m.completed)) for m in minutes]
    failed = [(m.minute + middle, float(m.failed)) for m in minutes]
    p50 = [(m.minute + middle, m.latency_p50) for m in minutes if m.latency_p50 is not None]
    p95 = [(m.minute + middle, m.latency_p95) for m in minutes if m.latency_p95 is not None]
    return [
        Chart(
            "Runs per minute",
            "/min",
            [Series("completed", completed, "series-ok"), Series("failed", failed, "series-bad")],
        ),
        Chart(
            "Add to commit (completed runs)",
            "s",
            [Series("p50", p50, "series-0"), Series("p95", p95, "series-1")],
        ),
    ]


def metric_charts(history: MetricsHistory, now: Snapshot) -> list[Chart]:
    def points(name: str) -> list[tuple[datetime, float]]:
        # A count over the trailing minute, not a rate extrapolated from a few seconds.
        def measure(w: Window) -> float | None:
            return w.increase(name)

        return [(_at(t), v) for t, v in history.trailing(now, measure, 60.0)]

    llm = Chart(
        "LLM calls and errors in the trailing minute",
        "",
        [
            Series("calls", points("mnemo_llm_calls_total"), "series-0"),
            Series("errors", points("mnemo_llm_errors_total"), "series-bad"),
        ],
    )
    backlog = Chart("Backlog and Kafka lag per stage", "", [])
    keys = sorted(
        (name, labels)
        for (name, labels) in now.values
        if name.startswith(BACKLOG_PREFIXES) and _is_gauge(now, name)
    )
    for i, key in enumerate(keys[:MAX_BACKLOG_SERIES]):
        name, labels = key
        label = name.removeprefix("mnemo_") + "".join(f" {k}={v}" for k, v in labels)
        gauge = [(_at(t), v) for t, v in history.gauge(now, key)]
        backlog.series.append(Series(label, gauge, f"series-{i % 6}"))
    return [llm, backlog]


def _is_gauge(now: Snapshot, name: str) -> bool:
    return any(f.type == "gauge" and f.name == name for f in now.families)


def render_all(charts: list[Chart], now: datetime) -> list[Markup]:
    return [line_chart(c, now - HOUR, now) for c in charts]
