from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from mnemo.console.metrics_view import MetricsHistory, Snapshot, Window, bucket_quantile


def _registry() -> tuple[CollectorRegistry, Counter, Histogram, Gauge]:
    registry = CollectorRegistry()
    runs = Counter("mnemo_runs_total", "Runs", ["status"], registry=registry)
    latency = Histogram(
        "mnemo_step_seconds", "Steps", ["step"], buckets=(0.1, 1, 10), registry=registry
    )
    backlog = Gauge("mnemo_backlog_records", "Backlog", ["kind"], registry=registry)
    return registry, runs, latency, backlog


def _snap(registry: CollectorRegistry, at: float) -> Snapshot:
    return Snapshot.parse(generate_latest(registry).decode(), at)


def test_a_window_turns_counters_into_increases_and_rates() -> None:
    registry, runs, _, backlog = _registry()
    runs.labels(status="completed").inc(5)
    runs.labels(status="failed").inc(1)
    backlog.labels(kind="run").set(7)
    before = _snap(registry, 100.0)
    runs.labels(status="completed").inc(30)
    now = _snap(registry, 130.0)

    window = Window(now, before)
    assert window.seconds == 30
    assert window.increase("mnemo_runs_total", status="completed") == 30
    assert window.increase("mnemo_runs_total") == 30
    assert window.rate(window.increase("mnemo_runs_total", status="completed")) == 1.0
    assert Window(now, None).increase("mnemo_runs_total") == 36  # since start
    assert Window(now, None).rate(36) is None
    assert list(now.select("mnemo_backlog_records")) == [({"kind": "run"}, 7.0)]
    assert not any(name.endswith("_created") for name, _ in now.values)


def test_a_counter_that_went_down_counts_from_zero() -> None:
    registry, runs, _, _ = _registry()
    runs.labels(status="completed").inc(50)
    before = _snap(registry, 0.0)
    registry2, runs2, _, _ = _registry()  # the process restarted
    runs2.labels(status="completed").inc(4)
    assert Window(_snap(registry2, 10.0), before).increase("mnemo_runs_total") == 4


def test_quantiles_interpolate_inside_buckets_like_prometheus() -> None:
    registry, _, latency, _ = _registry()
    for value in (0.05,) * 50 + (0.5,) * 40 + (5.0,) * 10:
        latency.labels(step="extract").observe(value)
    latency.labels(step="commit").observe(50)  # above every finite bucket
    window = Window(_snap(registry, 1.0), None)
    assert window.quantile("mnemo_step_seconds", 0.5, step="extract") == pytest.approx(0.1)
    assert window.quantile("mnemo_step_seconds", 0.9, step="extract") == pytest.approx(1.0)
    assert window.quantile("mnemo_step_seconds", 0.95, step="extract") == pytest.approx(5.5)
    assert window.quantile("mnemo_step_seconds", 0.5, step="commit") == 10.0
    assert window.quantile("mnemo_step_seconds", 0.5, step="missing") is None
    assert window.mean("mnemo_step_seconds", step="extract") == pytest.approx(0.725)


def test_bucket_quantile_edge_cases() -> None:
    assert bucket_quantile(0.5, []) is None
    assert bucket_quantile(0.5, [(1.0, 0.0), (float("inf"), 0.0)]) is None
    assert bucket_quantile(0.5, [(1.0, 4.0), (float("inf"), 4.0)]) == pytest.approx(0.5)


def test_history_keeps_spaced_recent_snapshots_and_draws_series() -> None:
    registry, runs, _, _ = _registry()
    history = MetricsHistory(min_spacing=2.0, max_age=60.0)
    for at in (0.0, 1.0, 10.0, 20.0, 30.0, 100.0):
        runs.labels(status="completed").inc(10)
        history.record(_snap(registry, at))
    now = _snap(registry, 105.0)
    # 0 and 1 are too close, and everything before 100 - 60 is gone: only 100 is left.
    assert history.window(now, 60.0).base is not None
    assert history.window(now, 60.0).base.at == 100.0
    assert history.window(_snap(registry, 100.5), 60.0).base is None  # less than 1 s old
    assert history.series(now, lambda w: w.increase("mnemo_runs_total")) == [0.0]


def test_trailing_counts_each_samples_last_minute_and_gauges_keep_their_values() -> None:
    registry, runs, _, backlog = _registry()
    history = MetricsHistory(min_spacing=1.0, max_age=3600.0)
    for at, completed, waiting in ((0.0, 0, 3), (30.0, 4, 5), (60.0, 6, 0), (120.0, 7, 2)):
        runs.labels(status="completed").inc(completed)
        backlog.labels(kind="run").set(waiting)
        history.record(_snap(registry, at))
    now = _snap(registry, 120.0)
    counted = history.trailing(now, lambda w: w.increase("mnemo_runs_total"), 60.0)
    # At 30: 4 since 0; at 60: 10 since 0 (60 s back); at 120: 7 since 60.
    assert counted == [(30.0, 4.0), (60.0, 10.0), (120.0, 7.0)]
    key = ("mnemo_backlog_records", (("kind", "run"),))
    assert history.gauge(now, key) == [(0.0, 3.0), (30.0, 5.0), (60.0, 0.0), (120.0, 2.0)]
