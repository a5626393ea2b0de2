"""A second gateway behind the same topics and database (issue 39): both take adds into one
pipeline, and closing one leaves the other serving: losing a gateway is not an outage."""

from __future__ import annotations

import pytest

from mnemo.embeddings.hashing import HashEmbedder
from mnemo.kafka.gateway import start_engine
from mnemo.llm.openai_client import OpenAICompatibleLLM
from tests.kafka.conftest import Cluster, service_logs
from tests.kafka.helpers import add, memories, wait_all

pytestmark = pytest.mark.kafka


async def test_two_gateways_feed_one_pipeline_and_either_may_go(
    cluster: Cluster, project: str
) -> None:
    llm = OpenAICompatibleLLM(base_url=cluster.llm.base_url, api_key=None, model="scripted",
                              timeout=10, max_attempts=2)  # fmt: skip
    second = await start_engine(cluster.settings, llm=llm, embedder=HashEmbedder())
    try:
        via_second = (await add(second, project, "g", "via the second gateway")).run_id
        # Either gateway answers for every run: they share the database.
        assert (await cluster.engine.get_run(project, via_second)).run_id == via_second
    finally:
        await second.close()  # the second gateway is lost
    via_first = (await add(cluster.engine, project, "g", "via the first gateway")).run_id
    try:
        await wait_all(cluster.engine, project, [via_second, via_first], timeout=150)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{service_logs(cluster)}") from exc
    assert sorted(m.content for m in await memories(cluster.engine, project, "g")) == [
        "User said: via the first gateway",
        "User said: via the second gateway",
    ]
