"""Turning tracing on from the standard OpenTelemetry variables, at an entry point.

Tracing is on when `OTEL_TRACES_EXPORTER` names an exporter (`otlp`, `console`; `none` is
off) or, without it, when `OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; `OTEL_SDK_DISABLED=true` turns it off. The SDK
itself reads the rest: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER(_ARG)`, the OTLP endpoint, headers and timeout, `OTEL_PROPAGATORS`,
`OTEL_BSP_*`. OTLP goes over HTTP/protobuf unless `OTEL_EXPORTER_OTLP(_TRACES)_PROTOCOL` is
`grpc`. The SDK is an optional dependency (`pip install 'mnemo[otel]'`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mnemo.tracing import spans

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


class TracingUnavailable(RuntimeError):
    """The OTEL_* variables ask for traces that this installation cannot send."""


def exporter_names(environ: Mapping[str, str]) -> list[str]:
    """The span exporters the variables ask for (empty: tracing off)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    listed = environ.get("OTEL_TRACES_EXPORTER")
    if listed is not None:
        return [n.strip() for n in listed.split(",") if n.strip() and n.strip() != "none"]
    return ["otlp"] if any(environ.get(k) for k in ENDPOINTS) else []


def configure(service_name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Trace this process if the variables ask for it; returns whether it does.
    `service_name` names the process unless OTEL_SERVICE_NAME (or service.name in
    OTEL_RESOURCE_ATTRIBUTES) does."""
    env = os.environ if environ is None else environ
    names = exporter_names(env)
    if not names:
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise TracingUnavailable(
            f"OTEL_* variables ask for traces (exporters: {', '.join(names)}), but the "
            "OpenTelemetry SDK is not installed: pip install 'mnemo[otel]', or unset "
            "OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_ENDPOINT"
        ) from exc
    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    provider = TracerProvider(
        resource=Resource.create({} if named else {SERVICE_NAME: service_name})
    )
    for name in names:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name, env)))
    trace.set_tracer_provider(provider)
    spans.use(provider)
    return True


def _exporter(name: str, env: Mapping[str, str]) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if name != "otlp":
        raise TracingUnavailable(
            f"OTEL_TRACES_EXPORTER={name!r} is not supported by mnemo: use otlp, console or none"
        )
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    try:
        if protocol == "http/protobuf":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        elif protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[no-redef]
                OTLPSpanExporter,
            )
        else:
            raise TracingUnavailable(
                f"OTLP protocol {protocol!r} is not supported: use http/protobuf or grpc"
            )
    except ImportError as exc:
        package = "opentelemetry-exporter-otlp-proto-" + ("grpc" if protocol == "grpc" else "http")
        raise TracingUnavailable(
            f"OTLP over {protocol} needs {package}: pip install {package} "
            "(mnemo[otel] brings the HTTP one)"
        ) from exc
    return OTLPSpanExporter()
