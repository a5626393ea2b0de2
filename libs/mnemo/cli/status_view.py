"""The one screen of `mnemo status`, from the report `mnemo.cli.status` gathers (pure)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

WIDTH = 12


def render(report: dict[str, Any]) -> str:
    if str(report.get("server", "")).startswith("unreachable"):
        return f"mnemo at {report['url']}: {report['server']}"
    verdict = "ready" if report.get("ready") else "NOT READY"
    lines = [f"mnemo at {report['url']}: {verdict}"]
    checks = {c["name"]: c for c in report.get("checks", [])}
    metrics = report.get("metrics", [])

    def row(label: str, text: str) -> None:
        lines.append(f"  {label:<{WIDTH}}{text}")

    row("gateway", f"{report.get('server')}; MCP at {report.get('mcp')}")
    row("api key", str(report.get("api_key")))
    row("postgres", _check(checks.get("database")))
    broker = checks.get("broker")
    row("broker", _check(broker) if broker else "none: the queue is the embedded bus in Postgres")
    row("workers", _workers(report.get("workers", []), checks))
    row("backlog", _backlog(metrics))
    lag = _lag(metrics)
    if lag:
        row("lag", lag)
    row("runs", _runs(metrics, report.get("oldest_running_run_age_seconds")))
    row("llm", _llm(metrics))
    for name, label in (("llm", "llm server"), ("embedder", "embedder")):
        if name in checks:  # the endpoint checks of `mnemo serve` (mnemo.core.endpoints)
            row(label, _check(checks[name]))
    failures = report.get("recent_failures")
    if failures is not None:
        lines.append(f"  last errors (project {report.get('project')}):")
        lines += [_failure(f) for f in failures] or ["    none"]
    return "\n".join(lines)


def _check(check: dict[str, Any] | None) -> str:
    if check is None:
        return "unknown"
    return f"{'ok' if check['ok'] else 'FAILING'}: {check['detail']}"


def _workers(workers: list[dict[str, Any]], checks: dict[str, dict[str, Any]]) -> str:
    beats = ", ".join(
        f"{w['role']}@{w['host']}:{w['pid']} ({w['heartbeat_age_seconds']:.1f} s ago)"
        for w in workers
    )
    parts = [f"{len(workers)} live" + (f": {beats}" if beats else "")]
    for name in ("worker_processes", "workers"):
        if name in checks and (name == "worker_processes" or not checks[name]["ok"]):
            parts.append(_check(checks[name]))
    return "; ".join(parts)


def _values(metrics: list[dict[str, Any]], name: str) -> list[tuple[dict[str, str], float]]:
    return [(m["labels"], float(m["value"])) for m in metrics if m["name"] == name]


def _backlog(metrics: list[dict[str, Any]]) -> str:
    records = _values(metrics, "mnemo_backlog_records")
    if not records:
        return "not measured (see the server's log)"
    oldest = {labels["kind"]: v for labels, v in _values(metrics, "mnemo_backlog_oldest_seconds")}
    return ", ".join(
        f"{labels['kind']} {int(v)}"
        + (f" (oldest {oldest.get(labels['kind'], 0):.1f} s)" if v else "")
        for labels, v in records
    )


def _lag(metrics: list[dict[str, Any]]) -> str:
    by_group: dict[str, float] = defaultdict(float)
    for labels, v in _values(metrics, "mnemo_kafka_consumer_lag"):
        by_group[labels.get("group", "?")] += v
    text = ", ".join(f"{g} {int(v)}" for g, v in sorted(by_group.items()))
    stale = any(v > 0 for _, v in _values(metrics, "mnemo_kafka_consumer_lag_stale"))
    if text and stale:  # the gauge keeps its last values while the broker cannot be read
        ages = [v for _, v in _values(metrics, "mnemo_kafka_consumer_lag_age_seconds")]
        when = f"read {ages[0]:.0f} s ago" if ages and ages[0] >= 0 else "never read"
        text += f" (STALE: {when}, the broker does not answer)"
    return text


def _runs(metrics: list[dict[str, Any]], oldest_running: float | None) -> str:
    counts: dict[str, float] = defaultdict(float)
    for labels, v in _values(metrics, "mnemo_runs_total"):
        counts[labels.get("status", "?")] += v
    # The counter counts runs entering each status: `running` is every add (or retry).
    words = {"running": "added", "in_buffer": "buffered", "completed": "completed"}
    words["failed"] = "failed"
    text = ", ".join(f"{int(counts[s])} {w}" for s, w in words.items() if s in counts)
    text = text or "none yet"
    text += " (since the server started)"
    if oldest_running is not None:
        text += f"; oldest running {oldest_running:.1f} s"
    return text


def _llm(metrics: list[dict[str, Any]]) -> str:
    calls = sum(v for _, v in _values(metrics, "mnemo_llm_calls_total"))
    errors = sum(v for _, v in _values(metrics, "mnemo_llm_errors_total"))
    text = f"{int(calls)} calls, {int(errors)} errors"
    produced: dict[str, float] = defaultdict(float)
    for labels, v in _values(metrics, "mnemo_runs_produced_total"):
        produced[labels.get("produced_by", "?")] += v
    if produced:  # "offline": heuristics, no language model
        text += "; runs produced by " + ", ".join(
            f"{name} {int(v)}" for name, v in sorted(produced.items())
        )
    return text


def _failure(failure: dict[str, Any]) -> str:
    when = str(failure.get("updated_at", ""))[:19].replace("T", " ")
    error = " ".join(str(failure.get("error") or "").split())
    if len(error) > 160:
        error = error[:157] + "..."
    return f"    {when}  run {failure['run_id']}  {failure.get('group_id')}: {error}"
