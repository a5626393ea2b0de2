"""The GenAI semantic conventions' memory spans (`mnemo.tracing.memory`), recorded with the
OpenTelemetry SDK's in-memory exporter: a commit holds `update_memory`, and the gateway's
search, list, get and delete hold `search_memory` and `delete_memory`, each in the caller's
trace, naming the store and never the query or the memories' content."""

from __future__ import annotations

import httpx
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mnemo.core.engine import Engine
from mnemo.gateway.app import create_app
from tests.integration.engine.helpers import facts
from tests.integration.engine.test_tracing import attrs, exporter, named, trace_of

__all__ = ["exporter"]

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
SECRET_QUERY = "zebra-secret-query"


def memory_spans(found: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in found if "gen_ai.memory.store.id" in attrs(s)]


async def test_memory_operations_emit_genai_memory_spans(
    engine: Engine, project: str, exporter: InMemorySpanExporter
) -> None:
    _, key = await engine.create_key(project, "spans")
    headers = {
        "Authorization": f"Bearer {key}",
        "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01",
    }
    store = f"{project}/default"
    app = create_app(engine.settings, engine)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1", headers=headers
    ) as http:
        body = {"user_id": "ada", "input": facts(("UserKnowledge", "Ada keeps zebras"))}
        run_id = (await http.post("/v1/memories", json=body)).json()["run_id"]
        done = (await http.get(f"/v1/runs/{run_id}", params={"wait": 20})).json()
        assert done["status"] == "completed", done
        memory_id = done["committed_operations"]["created"][0]["memory_id"]
        query = {"query": SECRET_QUERY, "user_id": "ada"}
        assert (await http.post("/v1/memories/search", json=query)).status_code == 200
        assert (await http.post("/v1/memories/list", json={"user_id": "ada"})).status_code == 200
        got = await http.get(f"/v1/memories/{memory_id}", params={"user_id": "ada"})
        assert got.status_code == 200
        gone = await http.delete(f"/v1/memories/{memory_id}", params={"user_id": "ada"})
        assert gone.status_code == 204
        again = await http.delete(f"/v1/memories/{memory_id}", params={"user_id": "ada"})
        assert again.status_code == 404

    found = trace_of(exporter, int(CALLER_TRACE, 16))
    by_id = {s.context.span_id: s for s in found}
    spans = sorted(memory_spans(found), key=lambda s: s.start_time or 0)
    assert [s.name for s in spans] == [
        f"update_memory {store}",
        f"search_memory {store}",
        f"search_memory {store}",
        f"search_memory {store}",
        f"delete_memory {store}",
        f"delete_memory {store}",
    ]
    for current in spans:
        a = attrs(current)
        assert a["gen_ai.operation.name"] == current.name.split()[0]
        assert a["gen_ai.provider.name"] == "mnemo"
        assert a["gen_ai.memory.store.id"] == store
        assert current.kind == SpanKind.INTERNAL
        # Content stays out: the convention's opt-in attributes are never set.
        assert "gen_ai.memory.query.text" not in a and "gen_ai.memory.records" not in a
        assert SECRET_QUERY not in repr(a) and "zebras" not in repr(a)

    update, search, listing, get, delete, missing = spans
    (commit_step,) = named(found, "mnemo.step commit")
    assert update.parent is not None and by_id[update.parent.span_id] is commit_step
    assert attrs(update)["mnemo.memory.memories_created"] == 1
    assert attrs(search)["mnemo.memory.retrieval"] == "hybrid"
    assert attrs(search)["mnemo.memory.returned"] == 1
    assert attrs(listing)["mnemo.memory.retrieval"] == "list"
    assert attrs(listing)["mnemo.memory.returned"] == 1
    assert attrs(get)["gen_ai.memory.record.id"] == memory_id
    assert attrs(delete)["gen_ai.memory.record.id"] == memory_id
    assert delete.status.status_code == StatusCode.UNSET
    assert attrs(missing)["error.type"] == "NotFound"
    assert missing.status.status_code == StatusCode.ERROR
    # Each gateway operation continues the caller's trace, as a child of the caller's span.
    for current in (search, listing, get, delete, missing):
        assert current.parent is not None and current.parent.span_id == int(CALLER_SPAN, 16)
