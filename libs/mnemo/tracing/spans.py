"""The spans mnemo's code opens: a thin facade over OpenTelemetry that costs nothing when
tracing is off, so the pipeline has one code path whether the optional SDK is installed or
not. A run's trace context travels as a W3C carrier (`{"traceparent": ...}`): in bus
records' payloads, in buffered items, and as Kafka record headers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

Carrier = dict[str, str]
Kind = Literal["internal", "server", "client", "producer", "consumer"]
AttributeValue = str | bool | int | float | Sequence[str]


class _State:
    tracer: Any = None  # an opentelemetry Tracer once configured


def active() -> bool:
    return _State.tracer is not None


def use(provider: Any) -> None:
    """Trace with this TracerProvider (the entry points' setup, or a test's)."""
    _State.tracer = provider.get_tracer("mnemo") if provider is not None else None


class Span:
    """What code may do with its span; a no-op when tracing is off."""

    def __init__(self, otel: Any = None) -> None:
        self._otel = otel

    def set(self, key: str, value: AttributeValue | None) -> None:
        if self._otel is not None and value is not None:
            self._otel.set_attribute(key, value)

    def update(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        for key, value in attributes.items():
            self.set(key, value)

    def fail(self, error_type: str, description: str) -> None:
        """Mark the span failed without an exception (e.g. a record sent to the DLQ)."""
        if self._otel is not None:
            from opentelemetry.trace import Status, StatusCode

            self._otel.set_attribute("error.type", error_type)
            self._otel.set_status(Status(StatusCode.ERROR, description))

    def link(self, carriers: Iterable[Carrier]) -> None:
        if self._otel is not None:
            for context in _span_contexts(carriers):
                self._otel.add_link(context)


NOOP = Span()


@contextmanager
def span(
    name: str,
    attributes: Mapping[str, AttributeValue | None] | None = None,
    *,
    kind: Kind = "internal",
    parent: Carrier | None = None,
    links: Iterable[Carrier] = (),
) -> Iterator[Span]:
    """A span around the block, child of the current one, or of `parent` when given (an
    empty or invalid carrier starts a new trace). An exception marks it failed, with
    `error.type` its class name, and propagates."""
    if _State.tracer is None:
        yield NOOP
        return
    from opentelemetry import propagate, trace

    context = propagate.extract(parent) if parent is not None else None
    with _State.tracer.start_as_current_span(
        name,
        context=context,
        kind=getattr(trace.SpanKind, kind.upper()),
        attributes={k: v for k, v in (attributes or {}).items() if v is not None},
        links=[trace.Link(c) for c in _span_contexts(links)],
    ) as otel:
        try:
            yield Span(otel)
        except BaseException as exc:
            if "error.type" not in (getattr(otel, "attributes", None) or {}):
                otel.set_attribute("error.type", type(exc).__qualname__)
            raise


@contextmanager
def continued(parent: Carrier) -> Iterator[None]:
    """Make `parent` (a caller's context) the current one for the block."""
    if _State.tracer is None:
        yield
        return
    from opentelemetry import context, propagate

    token = context.attach(propagate.extract(parent))
    try:
        yield
    finally:
        context.detach(token)


def carrier() -> Carrier:
    """The current span's context as a W3C carrier; empty when tracing is off."""
    if _State.tracer is None:
        return {}
    from opentelemetry import propagate

    out: Carrier = {}
    propagate.inject(out)
    return out


def to_headers(trace: Carrier) -> list[tuple[str, bytes]]:
    """A carrier as Kafka record headers."""
    return [(k, v.encode()) for k, v in trace.items()]


def from_headers(headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes] | None) -> Carrier:
    """The W3C trace headers among a Kafka record's headers."""
    items = headers.items() if isinstance(headers, Mapping) else (headers or [])
    return {
        k: v.decode("ascii", errors="replace")
        for k, v in items
        if k in ("traceparent", "tracestate") and isinstance(v, bytes)
    }


def _span_contexts(carriers: Iterable[Carrier]) -> list[Any]:
    from opentelemetry import propagate, trace

    out = []
    for c in carriers:
        context = trace.get_current_span(propagate.extract(c)).get_span_context()
        if context.is_valid:
            out.append(context)
    return out
