"""Adds and waits for the Kafka suite."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from aiokafka import AIOKafkaProducer

from mnemo.core.engine import Engine
from mnemo.domain.memory import Memory, Run
from mnemo.domain.requests import AddRequest, ListRequest, NotFound
from mnemo.gateway.app import create_app
from mnemo.kafka.events.channels import ChannelNames
from mnemo.kafka.events.raw import derived_run_id
from mnemo.settings import Settings
from mnemo.store import runs
from tests.kafka.services import free_port


async def add(engine: Engine, project: str, user: str, *lines: str) -> Run:
    body: dict[str, Any] = {
        "group": "kt",
        "user_id": user,
        "input": {"string": {"content": list(lines)}},
    }
    return await engine.add(project, AddRequest.model_validate(body))


async def add_state(engine: Engine, project: str, user: str, content: str) -> Run:
    body = {
        "group": "kt",
        "user_id": user,
        "input": {"pre_extracted": {"items": [{"topic": "State", "content": content}]}},
    }
    return await engine.add(project, AddRequest.model_validate(body))


async def statuses(engine: Engine, project: str, run_ids: list[str]) -> Counter[str]:
    """Status counts; runs that outside producers started count as `missing` until the
    extractor has created their rows."""
    counts: Counter[str] = Counter()
    for run_id in run_ids:
        try:
            counts[(await engine.get_run(project, run_id)).status.value] += 1
        except NotFound:
            counts["missing"] += 1
    return counts


async def wait_all(
    engine: Engine, project: str, run_ids: list[str], timeout: float, status: str = "completed"
) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        counts = await statuses(engine, project, run_ids)
        if counts[status] == len(run_ids):
            return
        assert asyncio.get_running_loop().time() < deadline, counts
        await asyncio.sleep(0.2)


async def memories(engine: Engine, project: str, user: str, limit: int = 100) -> list[Memory]:
    request = ListRequest.model_validate({"group": "kt", "user_id": user, "limit": limit})
    found, _ = await engine.list_memories(project, request)
    return found


async def publish_raw(cluster: Any, event: dict[str, Any], key: bytes) -> str:
    """Publish `event` to the raw channel as an outside producer would; its run id."""
    producer = AIOKafkaProducer(bootstrap_servers=cluster.ks.bootstrap_servers, acks="all")
    await producer.start()
    try:
        topic = ChannelNames(cluster.ks.topic_prefix).raw
        meta = await producer.send_and_wait(topic, json.dumps(event).encode(), key=key)
    finally:
        await producer.stop()
    return derived_run_id(meta.topic, meta.partition, meta.offset)


async def completed_row(engine: Engine, run_id: str, timeout: float, logs: str = "") -> Any:
    """The run's row once it is completed (outside producers' runs have no row at first)."""
    deadline = time.monotonic() + timeout
    while True:
        async with engine.database.db.connect() as conn:
            row = await runs.raw(conn, run_id)
        if row is not None and row["status"] == "completed":
            return row
        assert time.monotonic() < deadline, (row, logs)
        await asyncio.sleep(0.2)


@asynccontextmanager
async def serving(settings: Settings, engine: Engine) -> AsyncIterator[str]:
    """The distributed gateway (the API over `engine`) on a free local port; its URL."""
    port = free_port()
    config = uvicorn.Config(
        create_app(settings, engine), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
