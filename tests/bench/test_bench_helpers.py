"""Smoke tests of the benchmark helpers (no database, no network, no model)."""

from __future__ import annotations

import asyncio
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
