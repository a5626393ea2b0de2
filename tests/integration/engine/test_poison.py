"""A record that still fails in the pipeline fails its run and never blocks its scope.

The run is written straight to the transport, past admission (whose limits now refuse such
an input), so that its commit hits a value Postgres cannot store: a text whose full-text
vector exceeds 1 MB (SQLSTATE 54000, "string is too long for tsvector").
"""

from __future__ import annotations

import random
import string

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.memory import RunState
from tests.integration.conftest import script_echo_pipeline
from tests.integration.engine.helpers import add, listing, says, submit_past_admission
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def distinct_words(count: int) -> str:
    rng = random.Random(54000)
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(count))


async def test_a_value_postgres_cannot_store_fails_its_run_and_the_scope_goes_on(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    script_echo_pipeline(llm)
    before = await add(engine, project, {"user_id": "u1", "input": says("first fact")})
    item = {"topic": "UserKnowledge", "content": distinct_words(150_000)}
    poison = await submit_past_admission(
        engine, project, "u1", {"pre_extracted": {"items": [item]}}, root="commit"
    )
    after = [
        await add(engine, project, {"user_id": "u1", "input": says(f"later fact {i}")})
        for i in range(3)
    ]
    for run in [before, *after]:
        done = await engine.wait_run(project, run.run_id, 60)
        assert done.status == RunState.completed, done
    failed = await engine.wait_run(project, poison, 60)
    assert failed.status == RunState.failed
    assert failed.error is not None and "tsvector" in failed.error, failed.error

    # A retry runs it again from its kept input: it fails the same way, and blocks nothing.
    await engine.retry_run(project, poison)
    again = await add(engine, project, {"user_id": "u1", "input": says("after the retry")})
    assert (await engine.wait_run(project, poison, 60)).status == RunState.failed
    assert (await engine.wait_run(project, again.run_id, 60)).status == RunState.completed
    contents = sorted(m.content for m in await listing(engine, project, user_id="u1"))
    assert contents == sorted(
        ["first fact", "later fact 0", "later fact 1", "later fact 2", "after the retry"]
    )
