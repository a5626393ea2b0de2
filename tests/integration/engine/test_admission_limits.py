"""Admission limits at the engine (what every transport and the embedded client share).

The 700 KB pre_extracted item of issue 12 was acknowledged, then failed its commit
(`string is too long for tsvector`) and wedged its scope; it is refused at the add now.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.requests import InvalidRequest
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from tests.integration.conftest import engine_settings, scripted_client
from tests.integration.engine.helpers import add, add_and_wait, facts, listing
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


async def _refused(engine: Engine, project: str, body: dict) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as refused:
        await add(engine, project, body)
    assert refused.value.kind == "unprocessable", refused.value.errors
    return refused.value


async def test_700kb_pre_extracted_item_is_refused(engine: Engine, project: str) -> None:
    huge = " ".join(f"w{i:06d}" for i in range(88_000))  # ~700 KB of distinct words
    body = {"user_id": "ann", "input": facts(("UserKnowledge", "fine"), ("UserKnowledge", huge))}
    refused = await _refused(engine, project, body)
    assert [e.location for e in refused.errors] == [
        "body.input.pre_extracted.items[1].content",  # over the memory limit
        "body.input.pre_extracted.items",  # and over the add's text limit
    ]
    assert await listing(engine, project, user_id="ann") == []
    # The scope is not wedged: the next add of the same user completes.
    done = await add_and_wait(
        engine, project, {"user_id": "ann", "input": facts(("UserKnowledge", "ok"))}
    )
    assert done.status.value == "completed"


async def test_total_text_of_an_add(engine: Engine, project: str) -> None:
    strings = ["word " * 8_000] * 3  # 120,000 characters in three strings
    body = {"user_id": "ann", "input": {"string": {"content": strings}}}
    refused = await _refused(engine, project, body)
    assert [e.location for e in refused.errors] == ["body.input.string.content"]
    messages = [{"role": "user", "content": "word " * 8_000}] * 3
    body = {"user_id": "ann", "input": {"conversation": {"messages": messages}}}
    refused = await _refused(engine, project, body)
    assert [e.location for e in refused.errors] == ["body.input.conversation.messages"]


async def test_errors_name_every_offending_item(engine: Engine, project: str) -> None:
    items = [("UserKnowledge", "x" * 5_000), ("UserKnowledge", "ok"), ("UserKnowledge", "  ")]
    refused = await _refused(engine, project, {"user_id": "ann", "input": facts(*items)})
    assert [e.location for e in refused.errors] == [
        "body.input.pre_extracted.items[0].content",
        "body.input.pre_extracted.items[2].content",
    ]


@pytest.fixture
async def limited_engine(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path
) -> AsyncIterator[Engine]:
    settings = engine_settings(
        postgres.new_database(),
        tmp_path,
        limits={"groups_per_project": 3, "memory_chars": 50, "topics_per_group": 2},
    )
    engine = await start_engine(settings, llm=scripted_client(llm), embedder=HashEmbedder())
    yield engine
    await engine.close()


async def test_configured_limits_apply(limited_engine: Engine, project: str) -> None:
    await limited_engine.list_groups(project)  # creates `default`
    for name in ("a", "b"):  # with `default`, three groups
        await limited_engine.put_group(project, name, {"template": "default"})
    await limited_engine.put_group(project, "a", {"template": "default"})  # a replace
    with pytest.raises(InvalidRequest) as refused:
        await limited_engine.put_group(project, "c", {"template": "default"})
    assert refused.value.kind == "unprocessable"
    assert refused.value.errors[0].location == "path.name"
    three_topics = {
        "topics": [{"name": f"T{i}", "description": "Anything."} for i in range(3)],
        "pipeline": {"steps": [{"id": "c", "kind": "commit", "input_type": "pre_extracted"}]},
    }
    with pytest.raises(InvalidRequest) as refused:
        await limited_engine.put_group(project, "a", three_topics)
    assert refused.value.errors[0].location == "body.topics"
    body = {"user_id": "ann", "input": facts(("UserKnowledge", "x" * 51))}
    refused_add = await _refused(limited_engine, project, body)
    assert "50" in refused_add.errors[0].message
