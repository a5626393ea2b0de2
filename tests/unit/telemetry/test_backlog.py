"""The backlog family's exposition, and the dashboard checker that reads such scrapes."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from mnemo.core.transport import Backlog
from mnemo.telemetry.backlog import OLDEST, RECORDS, render
from tests.support.promql import Selector, parse, problems, scraped


def test_render_exports_both_gauges_per_kind() -> None:
    text = render([Backlog("run", 3, 1.5), Backlog("flush", 0, 0.0)]).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families[RECORDS].type == families[OLDEST].type == "gauge"
    values = {(s.name, s.labels["kind"]): s.value for f in families.values() for s in f.samples}
    assert values == {
        (RECORDS, "run"): 3,
        (RECORDS, "flush"): 0,
        (OLDEST, "run"): 1.5,
        (OLDEST, "flush"): 0,
    }


def test_an_unmeasured_backlog_has_no_samples_rather_than_a_false_zero() -> None:
    text = render(None).decode()
    assert f"# TYPE {RECORDS} gauge" in text
    assert not [s for f in text_string_to_metric_families(text) for s in f.samples]


def test_parse_finds_selectors_matchers_and_grouping() -> None:
    expr = (
        'sum by (prompt) (rate(mnemo_llm_tokens_total{direction="prompt"}[5m])) * '
        "$price / 1000 + histogram_quantile(0.95, sum by (le) (rate(x_seconds_bucket[1m])))"
    )
    parsed = parse(expr)
    assert parsed.selectors == [
        Selector("mnemo_llm_tokens_total", (("direction", "=", "prompt"),)),
        Selector("x_seconds_bucket"),
    ]
    assert parsed.grouping == {"prompt", "le"}


def test_problems_name_missing_metrics_values_and_labels() -> None:
    samples = scraped(render([Backlog("run", 0, 0.0)]).decode())
    panel = {
        "title": "p",
        "targets": [
            {"expr": "max by (kind) (mnemo_backlog_records)"},
            {"expr": 'max(mnemo_backlog_records{kind="flush"})'},
            {"expr": "max by (topic) (mnemo_backlog_oldest_seconds)"},
            {"expr": "sum(mnemo_renamed_records)"},
        ],
    }
    assert problems([panel], samples) == [
        "p: no scraped sample matches "
        "Selector(metric='mnemo_backlog_records', matchers=(('kind', '=', 'flush'),))",
        "p: label 'topic' not on ['mnemo_backlog_oldest_seconds']",
        "p: no scraped sample matches Selector(metric='mnemo_renamed_records', matchers=())",
    ]
