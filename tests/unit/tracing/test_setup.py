"""Tracing is switched on by the standard OTEL_* variables only, and says what is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mnemo.tracing import spans
from mnemo.tracing.setup import TracingUnavailable, configure, exporter_names

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "environ, names",
    [
        ({}, []),
        ({"OTEL_SERVICE_NAME": "x"}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ["otlp"]),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, ["otlp"]),
        ({"OTEL_TRACES_EXPORTER": "console,otlp"}, ["console", "otlp"]),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, []),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, []),
    ],
)
def test_exporter_names_follow_the_standard_variables(
    environ: dict[str, str], names: list[str]
) -> None:
    assert exporter_names(environ) == names


def test_nothing_is_configured_without_otel_variables() -> None:
    assert configure("mnemo-test", {}) is False
    assert not spans.active()


def test_an_unsupported_exporter_or_protocol_is_named() -> None:
    with pytest.raises(TracingUnavailable, match="'zipkin' is not supported"):
        configure("t", {"OTEL_TRACES_EXPORTER": "zipkin"})
    env = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
    with pytest.raises(TracingUnavailable, match="'http/json' is not supported"):
        configure("t", env)


def test_a_missing_sdk_gives_an_actionable_error() -> None:
    code = (
        "import sys; sys.modules['opentelemetry.sdk'] = None\n"
        "from mnemo.tracing.setup import configure\n"
        "configure('t', {'OTEL_EXPORTER_OTLP_ENDPOINT': 'http://127.0.0.1:1'})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "pip install 'mnemo[otel]'" in done.stderr


def test_spans_are_noops_when_off_and_carry_context_when_on() -> None:
    with spans.span("off") as span:
        span.set("k", "v")
        assert spans.carrier() == {}
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    spans.use(provider)
    try:
        with spans.span("parent"):
            carried = spans.carrier()
        headers = spans.to_headers(carried)
        assert spans.from_headers([*headers, ("other", b"x")]) == carried
        with spans.span("child", parent=spans.from_headers(headers), kind="consumer"):
            pass
        with spans.span("root", parent={}):
            pass
    finally:
        spans.use(None)
    parent, child, root = memory.get_finished_spans()
    assert child.parent is not None and child.parent.span_id == parent.context.span_id
    assert child.context.trace_id == parent.context.trace_id
    assert root.parent is None and root.context.trace_id != parent.context.trace_id
