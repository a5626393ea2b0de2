"""One trace per run, recorded with the OpenTelemetry SDK's in-memory exporter: from the
gateway (continuing the caller's `traceparent`) through the embedded bus to every step, each
LLM call (GenAI attributes) and the commit; a buffer flush continues its first run's trace
and links the others; a failed LLM call marks its span."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mnemo.core.engine import Engine
from mnemo.gateway.app import create_app
from mnemo.tracing import spans
from tests.integration.conftest import script_echo_pipeline, user_payload
from tests.integration.engine.helpers import add, add_and_wait, says
from tests.integration.engine.test_buffers import buffered_group
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    spans.use(provider)
    yield memory
    spans.use(None)
    provider.shutdown()


def trace_of(exporter: InMemorySpanExporter, trace_id: int) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.context.trace_id == trace_id]


def named(found: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in found if s.name == name]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def test_one_trace_from_the_gateway_to_the_commit(
    engine: Engine, llm: ScriptedLLMServer, project: str, exporter: InMemorySpanExporter
) -> None:
    script_echo_pipeline(llm)
    _, key = await engine.create_key(project, "trace")
    app = create_app(engine.settings, engine)
    headers = {
        "Authorization": f"Bearer {key}",
        "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01",
    }
    # A memory to reconcile with, so that both LLM steps call the model.
    await add_and_wait(engine, project, {"user_id": "ada", "input": says("Ada writes compilers.")})
    body = {"user_id": "ada", "input": says("Ada writes compilers in Rust.")}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1", headers=headers
    ) as http:
        added = await http.post("/v1/memories", json=body)
        assert added.status_code == 200, added.text
        run_id = added.json()["run_id"]
        done = (await http.get(f"/v1/runs/{run_id}", params={"wait": 20})).json()
    assert done["status"] == "completed", done

    found = trace_of(exporter, int(CALLER_TRACE, 16))
    by_id = {s.context.span_id: s for s in found}
    (gateway,) = named(found, "mnemo.add")
    assert gateway.parent is not None and gateway.parent.span_id == int(CALLER_SPAN, 16)
    assert attrs(gateway)["mnemo.run_id"] == run_id
    (consumed,) = named(found, "mnemo.process run")
    assert consumed.kind == SpanKind.CONSUMER and consumed.parent.span_id == gateway.context.span_id

    steps = [s for s in found if s.name.startswith("mnemo.step ")]
    assert [attrs(s)["mnemo.step.id"] for s in sorted(steps, key=lambda s: s.start_time)] == [
        "extract_string",
        "reconcile",
        "commit",
    ]
    assert all(by_id[s.parent.span_id] is consumed for s in steps)
    (commit,) = named(found, "mnemo.step commit")
    assert attrs(commit)["mnemo.commit.outcome"] == "applied"
    assert attrs(commit)["mnemo.commit.memories_created"] == 1
    assert attrs(commit)["mnemo.run_ids"] == (run_id,)

    calls = named(found, "chat scripted")
    assert sorted(attrs(c)["gen_ai.prompt.name"] for c in calls) == [
        "extract",
        "transform_with_context",
    ]
    for call in calls:
        a = attrs(call)
        assert call.kind == SpanKind.CLIENT
        assert by_id[call.parent.span_id].name.startswith("mnemo.step ")
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.request.model"] == "scripted"
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert a["server.address"] == "127.0.0.1" and a["mnemo.llm.attempts"] == 1
    assert {s.status.status_code for s in found} == {StatusCode.UNSET}


async def test_a_flush_continues_the_first_runs_trace_and_links_the_others(
    engine: Engine, llm: ScriptedLLMServer, project: str, exporter: InMemorySpanExporter
) -> None:
    llm.script(
        "extract",
        lambda r: {"memories": [{"topic": "Note", "content": x} for x in user_payload(r)["input"]]},
    )
    llm.script("transform", {"memories": [{"topic": "Digest", "content": "tea and chess"}]})
    await engine.put_group(project, "notes", buffered_group({"triggers": {"count": 2}}))
    runs = [
        await add(engine, project, {"group": "notes", "user_id": "u", "input": says(text)})
        for text in ("tea", "chess")
    ]
    for run in runs:
        assert (await engine.wait_run(project, run.run_id, 20)).status.value == "completed"

    def trace_id(run_id: str) -> int:
        (span,) = [
            s
            for s in exporter.get_finished_spans()
            if s.name == "mnemo.add" and attrs(s).get("mnemo.run_id") == run_id
        ]
        return span.context.trace_id

    first, second = (trace_id(r.run_id) for r in runs)
    assert first != second
    (flush,) = named(trace_of(exporter, first), "mnemo.process flush")
    assert [link.context.trace_id for link in flush.links] == [second]
    names = {s.name for s in trace_of(exporter, first)}
    assert {"mnemo.step buffer", "mnemo.step transform", "mnemo.step commit"} <= names
    assert "mnemo.step commit" not in {s.name for s in trace_of(exporter, second)}
    assert "mnemo.step buffer" in {s.name for s in trace_of(exporter, second)}


async def test_a_failed_llm_call_marks_its_span(
    engine: Engine, llm: ScriptedLLMServer, project: str, exporter: InMemorySpanExporter
) -> None:
    llm.fail("extract", status=400, times=1)
    run = await add(engine, project, {"user_id": "u", "input": says("refused")})
    assert (await engine.wait_run(project, run.run_id, 20)).status.value == "failed"
    (gateway,) = [s for s in exporter.get_finished_spans() if s.name == "mnemo.add"]
    found = trace_of(exporter, gateway.context.trace_id)
    (call,) = named(found, "chat scripted")
    assert call.status.status_code == StatusCode.ERROR
    assert attrs(call)["error.type"] == "client"
    (consumed,) = named(found, "mnemo.process run")
    assert consumed.status.status_code == StatusCode.ERROR
    assert attrs(consumed)["error.type"] == "LLMError"
