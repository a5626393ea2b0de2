"""Idempotent adds on the Kafka transport: one run per key, 409 for another request, and
the same answer from a gateway started afresh on the same database."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mnemo.domain.requests import AddRequest, InvalidRequest
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.kafka.gateway import start_engine
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import memories, wait_all

pytestmark = pytest.mark.kafka


def _add(user: str, *lines: str) -> AddRequest:
    body: dict[str, Any] = {
        "group": "kt",
        "user_id": user,
        "input": {"string": {"content": list(lines)}},
    }
    return AddRequest.model_validate(body)


async def test_a_repeat_returns_the_first_run_and_nothing_runs_twice(
    cluster: Cluster, project: str
) -> None:
    engine = cluster.engine
    answers = await asyncio.gather(
        *(engine.admit(project, _add("ida", "I keep bees", "I sail"), "turn-1") for _ in range(8))
    )
    run_ids = {a.run.run_id for a in answers}
    assert len(run_ids) == 1 and [a.replayed for a in answers].count(False) == 1
    await wait_all(engine, project, list(run_ids), timeout=90)
    again = await engine.admit(project, _add("ida", "I keep bees", "I sail"), "turn-1")
    assert again.replayed and again.run.status.value == "completed"
    await asyncio.sleep(1.0)  # a second run, had one been published, would commit meanwhile
    found = sorted(m.content for m in await memories(engine, project, "ida"))
    assert found == ["User said: I keep bees", "User said: I sail"], service_logs(cluster)
    with pytest.raises(InvalidRequest) as refused:
        await engine.admit(project, _add("ida", "I keep wasps"), "turn-1")
    assert refused.value.kind == "conflict"


async def test_a_gateway_started_afresh_answers_a_repeat_with_the_same_run(
    cluster: Cluster, project: str
) -> None:
    first = await cluster.engine.admit(project, _add("ivo", "I fly kites"), "before-restart")
    restarted = await start_engine(cluster.settings, embedder=HashEmbedder())
    try:
        again = await restarted.admit(project, _add("ivo", "I fly kites"), "before-restart")
    finally:
        await restarted.close()
    assert again.replayed and again.run.run_id == first.run.run_id
    await wait_all(cluster.engine, project, [first.run.run_id], timeout=90)
    assert len(await memories(cluster.engine, project, "ivo")) == 1
