"""Idempotent adds on the Kafka transport: one run per key, 409 for another request, and
the same answer from a gateway started afresh on the same database."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.domain.requests import AddRequest
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.kafka.gateway import start_engine
from tests.kafka.conftest import Cluster
from tests.kafka.helpers import memories, wait_all

pytestmark = pytest.mark.kafka


def _add(user: str, *lines: str) -> AddRequest:
    body: dict[str, Any] = {
        "group": "kt",
        "user_id": user,
        "input": {"string": {"content": list(lines)}},
    }
    return AddRequest.model_validate(body)


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
