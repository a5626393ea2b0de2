"""Pipeline health: throughput, backlog and lag, LLM calls and errors, from `/metrics`.

Whatever the exposition holds is shown: the known families get panels, and every `mnemo_*`
family (new ones included) is listed with its samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemo.api.exposition import exposition
from mnemo.console.charts import sparkline
from mnemo.console.errors import ConsoleRoute
from mnemo.console.health_charts import metric_charts, render_all, run_charts
from mnemo.console.metrics_view import MetricsHistory, Snapshot, Window
from mnemo.console.rendering import render
from mnemo.console.sampler import metrics_history
from mnemo.console.session import ConsoleSession, SessionDep
from mnemo.domain.grants import require_project_wide

router = APIRouter(route_class=ConsoleRoute)

WINDOW_SECONDS = 60.0
POLL_SECONDS = 5
RUN_STATES = ("running", "in_buffer", "completed", "failed")
BACKLOG_PREFIXES = ("mnemo_backlog_", "mnemo_buffer_items", "mnemo_buffered_runs", "mnemo_kafka_")


@dataclass(frozen=True)
class Trend:
    label: str
    per_minute: float | None
    points: Any  # the sparkline's Markup


def _per_minute(w: Window, name: str, **match: str) -> float | None:
    rate = w.rate(w.increase(name, **match))
    return rate * 60 if rate is not None else None


def _runs(now: Snapshot, w: Window) -> list[dict[str, Any]]:
    seen = {labels.get("status", "") for labels, _ in now.select("mnemo_runs_total")}
    ordered = [s for s in RUN_STATES if s in seen] + sorted(seen - set(RUN_STATES))
    return [
        {
            "status": s,
            "total": Window(now, None).increase("mnemo_runs_total", status=s),
            "per_minute": _per_minute(w, "mnemo_runs_total", status=s),
        }
        for s in ordered
    ]


def _labelled(w: Window, name: str, label: str) -> list[str]:
    return sorted({labels.get(label, "") for labels, _ in w.now.select(name)})


def _channels(w: Window) -> list[dict[str, Any]]:
    """Records consumed from and produced to each channel (summed over services)."""
    since_start = Window(w.now, None)
    return [
        {
            "channel": channel,
            "in_total": since_start.increase("mnemo_records_in_total", channel=channel),
            "out_total": since_start.increase("mnemo_records_out_total", channel=channel),
            "in_per_second": w.rate(w.increase("mnemo_records_in_total", channel=channel)),
            "out_per_second": w.rate(w.increase("mnemo_records_out_total", channel=channel)),
        }
        for channel in _labelled(w, "mnemo_records_in_total", "channel")
    ]


def _steps(w: Window) -> list[dict[str, Any]]:
    return [
        {
            "step": step,
            "count": w.increase("mnemo_step_seconds_count", step=step),
            "mean": w.mean("mnemo_step_seconds", step=step),
            "p95": w.quantile("mnemo_step_seconds", 0.95, step=step),
        }
        for step in _labelled(w, "mnemo_step_seconds_count", "step")
    ]


def _llm(w: Window) -> dict[str, Any]:
    prompts = sorted(
        set(_labelled(w, "mnemo_llm_calls_total", "prompt"))
        | set(_labelled(w, "mnemo_llm_errors_total", "prompt"))
    )
    rows = [
        {
            "prompt": p,
            "calls": w.increase("mnemo_llm_calls_total", prompt=p),
            "per_minute": _per_minute(w, "mnemo_llm_calls_total", prompt=p),
            "errors": w.increase("mnemo_llm_errors_total", prompt=p),
            "tokens_in": w.increase("mnemo_llm_tokens_total", prompt=p, direction="prompt"),
            "tokens_out": w.increase("mnemo_llm_tokens_total", prompt=p, direction="completion"),
            "mean": w.mean("mnemo_llm_seconds", prompt=p),
            "p95": w.quantile("mnemo_llm_seconds", 0.95, prompt=p),
        }
        for p in prompts
    ]
    errors = [
        {"prompt": k[0], "kind": k[1], "count": v}
        for k, v in sorted(w.grouped("mnemo_llm_errors_total", ("prompt", "kind")).items())
        if v
    ]
    providers = _labelled(w, "mnemo_llm_calls_total", "provider")
    return {"prompts": rows, "errors": errors, "providers": providers}


def _backlog(now: Snapshot) -> list[dict[str, Any]]:
    rows = []
    for family in now.families:
        if family.type == "gauge" and family.name.startswith(BACKLOG_PREFIXES):
            for _, labels, value in family.samples:
                rows.append({"name": family.name, "labels": dict(labels), "value": value})
    return rows


def _trends(history: MetricsHistory, now: Snapshot) -> list[Trend]:
    def trend(label: str, name: str, **match: str) -> Trend:
        points = history.series(now, lambda w: _per_minute(w, name, **match))
        return Trend(label, points[-1] if points else None, sparkline(points[-60:], label))

    return [
        trend("Runs completed / min", "mnemo_runs_total", status="completed"),
        trend("Runs failed / min", "mnemo_runs_total", status="failed"),
        trend("LLM calls / min", "mnemo_llm_calls_total"),
        trend("LLM errors / min", "mnemo_llm_errors_total"),
    ]


async def health_context(request: Request, session: ConsoleSession) -> dict[str, Any]:
    engine = request.app.state.engine
    now = Snapshot.parse((await exposition(engine)).decode())
    history = metrics_history(request.app)
    window = history.window(now, WINDOW_SECONDS)
    trends = _trends(history, now)
    at = datetime.now(UTC)
    charts = [*await run_charts(engine, session.project, at), *metric_charts(history, now)]
    history.record(now)
    since_start = Window(now, None)
    quantiles = window if window.base else since_start
    return {
        "window": window,
        "windowed": window.base is not None,
        "runs": _runs(now, window),
        "latency": {
            "add_p50": quantiles.quantile("mnemo_add_seconds", 0.5),
            "add_p95": quantiles.quantile("mnemo_add_seconds", 0.95),
            "run_p50": quantiles.quantile("mnemo_run_seconds", 0.5),
            "run_p95": quantiles.quantile("mnemo_run_seconds", 0.95),
        },
        "channels": _channels(window),
        "channels_out": now.has("mnemo_records_out_total"),
        "steps": _steps(quantiles),
        "llm": _llm(quantiles),
        "backlog": _backlog(now),
        "trends": trends,
        "charts": render_all(charts, at),
        "sample_seconds": request.app.state.settings.console_sample_seconds,
        "families": [f for f in now.families if f.name.startswith("mnemo_")],
        "other_families": sum(1 for f in now.families if not f.name.startswith("mnemo_")),
        "poll_seconds": POLL_SECONDS,
    }


@router.get("/health")
async def health_page(request: Request, session: SessionDep) -> Response:
    require_project_wide(session.access, "see the project's health")
    return render(request, "health.html", session, await health_context(request, session))


@router.get("/health/panels")
async def health_panels(request: Request, session: SessionDep) -> Response:
    """The panels alone: htmx polls this every POLL_SECONDS."""
    require_project_wide(session.access, "see the project's health")
    return render(request, "_health_panels.html", session, await health_context(request, session))
