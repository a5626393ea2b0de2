"""The one screen of `mnemo status`, rendered from a gathered report."""

from __future__ import annotations

from typing import Any

from mnemo.cli.status_view import render

KAFKA: dict[str, Any] = {
    "url": "http://gw:8080",
    "mcp": "http://gw:8080/mcp",
    "server": "up",
    "ready": False,
    "api_key": "accepted",
    "checks": [
        {"name": "database", "ok": True, "detail": "reachable"},
        {"name": "broker", "ok": True, "detail": "kafka k:9092 answers"},
        {"name": "workers", "ok": False, "detail": "no live heartbeat from: buffer (none running)"},
    ],
    "workers": [
        {"role": "extractor", "host": "h", "pid": 7, "heartbeat_age_seconds": 0.42},
    ],
    "oldest_running_run_age_seconds": 12.5,
    "metrics": [
        {"name": "mnemo_backlog_records", "labels": {"kind": "mnemo.raw.v1"}, "value": 0},
        {"name": "mnemo_backlog_records", "labels": {"kind": "mnemo.extracted.v1"}, "value": 4},
        {"name": "mnemo_backlog_oldest_seconds", "labels": {"kind": "mnemo.raw.v1"}, "value": 0},
        {
            "name": "mnemo_backlog_oldest_seconds",
            "labels": {"kind": "mnemo.extracted.v1"},
            "value": 31.25,
        },
        {
            "name": "mnemo_kafka_consumer_lag",
            "labels": {"group": "mnemo-buffer", "topic": "mnemo.extracted.v1", "partition": "0"},
            "value": 3,
        },
        {
            "name": "mnemo_kafka_consumer_lag",
            "labels": {"group": "mnemo-buffer", "topic": "mnemo.extracted.v1", "partition": "1"},
            "value": 1,
        },
        {"name": "mnemo_runs_total", "labels": {"status": "running"}, "value": 9},
        {"name": "mnemo_llm_calls_total", "labels": {"prompt": "extract"}, "value": 9},
    ],
    "project": "default",
    "recent_failures": [
        {
            "run_id": "r-1",
            "group_id": "default",
            "updated_at": "2026-05-01T12:00:03.123+00:00",
            "error": "LLM prompt 'extract' failed\n after 1 attempt: 400 Bad Request",
        }
    ],
}


def test_a_kafka_gateway_with_a_stage_down() -> None:
    assert render(KAFKA).splitlines() == [
        "mnemo at http://gw:8080: NOT READY",
        "  gateway     up; MCP at http://gw:8080/mcp",
        "  api key     accepted",
        "  postgres    ok: reachable",
        "  broker      ok: kafka k:9092 answers",
        "  workers     1 live: extractor@h:7 (0.4 s ago); "
        "FAILING: no live heartbeat from: buffer (none running)",
        "  backlog     mnemo.raw.v1 0, mnemo.extracted.v1 4 (oldest 31.2 s)",
        "  lag         mnemo-buffer 4",
        "  runs        9 added (since the server started); oldest running 12.5 s",
        "  llm         9 calls, 0 errors",
        "  last errors (project default):",
        "    2026-05-01 12:00:03  run r-1  default: "
        "LLM prompt 'extract' failed after 1 attempt: 400 Bad Request",
    ]


def test_unreachable_and_unmeasured() -> None:
    assert render({"url": "http://x", "server": "unreachable: refused"}) == (
        "mnemo at http://x: unreachable: refused"
    )
    bare = {**KAFKA, "metrics": [], "recent_failures": []}
    text = render(bare)
    assert "  backlog     not measured (see the server's log)" in text
    assert "  lag" not in text and "    none" in text


def test_what_produced_the_runs_is_shown() -> None:
    produced = [
        {"name": "mnemo_runs_produced_total", "labels": {"produced_by": "offline"}, "value": 3},
        {"name": "mnemo_runs_produced_total", "labels": {"produced_by": "gpt-4o"}, "value": 2},
    ]
    text = render({**KAFKA, "metrics": [*KAFKA["metrics"], *produced]})
    assert "  llm         9 calls, 0 errors; runs produced by gpt-4o 2, offline 3" in text


def test_lag_that_cannot_be_read_is_shown_stale_never_as_current() -> None:
    """During a broker outage the lag gauge keeps its last values (issue 39): status marks
    them with their age."""
    stale = {
        **KAFKA,
        "metrics": [
            *KAFKA["metrics"],
            {"name": "mnemo_kafka_consumer_lag_stale", "labels": {}, "value": 1},
            {"name": "mnemo_kafka_consumer_lag_age_seconds", "labels": {}, "value": 42.4},
        ],
    }
    lag = next(line for line in render(stale).splitlines() if line.startswith("  lag"))
    assert lag == "  lag         mnemo-buffer 4 (STALE: read 42 s ago, the broker does not answer)"
    current = {**KAFKA, "metrics": [*KAFKA["metrics"],
               {"name": "mnemo_kafka_consumer_lag_stale", "labels": {}, "value": 0}]}  # fmt: skip
    assert "  lag         mnemo-buffer 4" in render(current).splitlines()
