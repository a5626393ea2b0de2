"""Smoke tests of the benchmark helpers (no database, no network; the fake LLM loads the bundled tokenizer)."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from bench import loadgen
from bench.common import Table, pct, question, sentence
from bench.fake_llm import mem0_answer


def test_percentiles_by_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert pct(values, 50) == 50.0
    assert pct(values, 99) == 99.0
    assert pct([], 50) != pct([], 50)  # NaN


def test_table_renders_one_block() -> None:
    table = Table()
    table.add("s", "metric", "1 ms", "note")
    table.add("s", "other", "2 ms")
    text = table.render()
    assert "metric" in text and "other" in text and text.count("\n") == 5


def test_synthetic_text_is_distinct_with_serials() -> None:
    rng = random.Random(1)
    assert len({sentence(rng, i) for i in range(100)}) == 100
    assert len({question(rng, i) for i in range(100)}) == 100


def test_mem0_answer_echoes_user_lines() -> None:
    prompt = (
        "## Existing Memories\n[]\n\n## New Messages\nuser: I like tea\n\n## Observation Date\nx"
    )
    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": prompt}]}
    assert mem0_answer(body) == {"memory": [{"text": "User said: I like tea"}]}


async def test_http_pool_never_reuses_a_connection_the_server_may_have_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that closes idle keep-alive connections (as uvicorn does after 5 s) must not
    turn the next request into a load-generator error."""
    monkeypatch.setattr(loadgen, "KEEP_ALIVE_REUSE_SECONDS", 0.05)
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 0.1)
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        except (TimeoutError, asyncio.IncompleteReadError):
            writer.close()  # idle too long: the server closes the keep-alive connection

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = loadgen.HttpPool("127.0.0.1", port, {}, size=1)
    try:
        assert await pool.post("/x", {"a": 1}) == (200, b"ok")
        assert await pool.post("/x", {"a": 2}) == (200, b"ok")  # reused at once
        await asyncio.sleep(0.3)  # the server has closed it by now
        assert await pool.post("/x", {"a": 3}) == (200, b"ok")
        assert connections == 2
    finally:
        await pool.close()
        server.close()


def test_the_fake_llm_counts_calls_and_tokens_per_prompt_with_one_tokenizer() -> None:
    from starlette.testclient import TestClient

    from bench.fake_llm import FakeLLM, prompt_text
    from mnemo.prompts import extract as extract_prompt

    server = FakeLLM(0.0)
    ours = {
        "model": "m",
        "messages": [{"role": "system", "content": "Topics:\n- Facts: facts"},
                     {"role": "user", "content": json.dumps({"input": ["I like tea."]})}],
        "response_format": {"type": "json_schema", "json_schema": {
            "name": extract_prompt.PROMPT.name,
            "schema": extract_prompt.Response.model_json_schema()}},
    }  # fmt: skip
    theirs = {
        "model": "m",
        "response_format": {"type": "json_object"},
        "messages": [{"role": "user", "content": "## New Messages\nuser: I like tea.\n"}],
    }
    with TestClient(server.app) as client:
        for body in (ours, ours, theirs):
            answered = client.post("/v1/chat/completions", json=body).json()
        stats = client.get("/stats").json()
    assert stats["calls"] == {"extract": 2, "mem0_additive_extraction": 1}
    # The schema a structured request sends is part of what the model reads.
    assert "properties" in prompt_text(ours) and server.count(prompt_text(ours)) > server.count(
        prompt_text({**ours, "response_format": None})
    )
    assert stats["prompt_tokens"]["extract"] == 2 * server.count(prompt_text(ours))
    mem0_answer_text = answered["choices"][0]["message"]["content"]
    assert stats["completion_tokens"]["mem0_additive_extraction"] == server.count(mem0_answer_text)
    assert answered["usage"]["completion_tokens"] == server.count(mem0_answer_text) > 0
