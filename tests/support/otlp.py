"""A real OTLP/HTTP trace receiver on 127.0.0.1: what the OpenTelemetry SDK's exporter of
other processes (stage services, worker processes) sends, decoded with opentelemetry-proto.

    with OtlpReceiver() as receiver:
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = receiver.endpoint
        ...
        receiver.spans(trace_id)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    kind: int
    attributes: dict[str, Any]
    links: tuple[int, ...]  # linked trace ids
    error: bool
    start_ns: int = 0  # unix time in nanoseconds


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    return getattr(v, kind) if kind else None


class OtlpReceiver:
    def __init__(self) -> None:
        self._spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = ExportTraceServiceRequest.FromString(body)
                receiver._take(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _take(self, request: ExportTraceServiceRequest) -> None:
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for s in scope.spans:
                    found.append(
                        ReceivedSpan(
                            service=str(resource.get("service.name", "")),
                            trace_id=int.from_bytes(s.trace_id, "big"),
                            span_id=int.from_bytes(s.span_id, "big"),
                            parent_id=int.from_bytes(s.parent_span_id, "big")
                            if s.parent_span_id
                            else None,
                            name=s.name,
                            kind=s.kind,
                            attributes={a.key: _value(a.value) for a in s.attributes},
                            links=tuple(int.from_bytes(link.trace_id, "big") for link in s.links),
                            error=s.status.code == 2,
                            start_ns=s.start_time_unix_nano,
                        )
                    )
        with self._lock:
            self._spans.extend(found)

    def spans(self, trace_id: int | None = None) -> list[ReceivedSpan]:
        with self._lock:
            return [s for s in self._spans if trace_id is None or s.trace_id == trace_id]
