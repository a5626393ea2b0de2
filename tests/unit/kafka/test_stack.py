"""`python -m mnemo.kafka.stack --gateways 2`: two gateways behind the same topics, each
on its own port and health URL, the stages after them (issue 39: a kill -9 of the only
gateway left about 24 s with none)."""

from __future__ import annotations

from pathlib import Path

from mnemo.kafka.stack import programs


def test_two_gateways_on_consecutive_ports_then_the_stages(tmp_path: Path) -> None:
    stack = programs(tmp_path, "services.gateway", 8080, 9100, {"extractor": 2}, gateways=2)
    names = [p.name for p in stack]
    assert names[:2] == ["gateway", "gateway-2"]
    assert [p.health_url for p in stack[:2]] == [
        "http://127.0.0.1:8080/healthz",
        "http://127.0.0.1:8081/healthz",
    ]
    assert [p.env["MNEMO_PORT"] for p in stack[:2]] == ["8080", "8081"]
    assert names[2:] == ["extractor", "extractor-2", "buffer", "transformer", "committer"]
    assert [p.env["MNEMO_METRICS_PORT"] for p in stack[2:]] == [str(9101 + i) for i in range(5)]
