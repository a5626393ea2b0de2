"""Issue 32: a destructive reconcile answer fails the run, retryably, and writes nothing.

The scripted OpenAI-compatible server plays a model that names ids it was not shown,
rewrites a memory to placeholder text, or deletes most of a scope. Reconcile is shared step
code (`steps.transform_with_context`), the same in both modes.
"""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.core.engine import Engine
from tests.integration.conftest import echo_extract, user_payload
from tests.integration.engine.helpers import add_and_wait, facts, listing, says
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
KNOWN = [
    "User prefers dark mode.",
    "User prefers tabs.",
    "User prefers vim.",
    "User prefers short answers.",
]


def answer_with(existing: Any) -> Any:
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        body = user_payload(request)
        shown = [m["id"] for m in body["existing"]]
        return {"existing": existing(shown), "new": [{"index": 0, "action": "keep"}]}

    return respond


@pytest.mark.parametrize(
    "existing",
    [
        pytest.param(lambda ids: [{"id": "not-shown", "action": "delete"}], id="invented-id"),
        pytest.param(
            lambda ids: [{"id": ids[0], "action": "rewrite", "content": "N/A"}], id="placeholder"
        ),
        pytest.param(lambda ids: [{"id": ids[0], "action": "rewrite", "content": " "}], id="empty"),
        pytest.param(lambda ids: [{"id": i, "action": "delete"} for i in ids], id="wipe"),
    ],
)
async def test_a_destructive_answer_fails_the_run_and_writes_nothing(
    engine: Engine, llm: ScriptedLLMServer, project: str, existing: Any
) -> None:
    await add_and_wait(
        engine, project, {"user_id": "g", "input": facts(*(("UserKnowledge", k) for k in KNOWN))}
    )
    before = sorted((m.id, m.content, m.updated_at) for m in await listing(
        engine, project, user_id="g"))  # fmt: skip
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", answer_with(existing))
    run = await add_and_wait(
        engine, project, {"user_id": "g", "input": says("User prefers light mode.")}
    )
    assert run.status == "failed"
    assert run.error and "nothing was written, retry the run" in run.error
    after = sorted((m.id, m.content, m.updated_at) for m in await listing(
        engine, project, user_id="g"))  # fmt: skip
    assert after == before
    # Retryable: the raw input is kept; a sane answer the second time commits.
    llm.script("transform_with_context", answer_with(lambda ids: []))
    await engine.retry_run(project, run.run_id)
    again = await engine.wait_run(project, run.run_id, 20)
    assert again.status == "completed", again.error


async def test_an_ordinary_supersession_passes_the_guards(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await add_and_wait(
        engine, project, {"user_id": "h", "input": facts(*(("UserKnowledge", k) for k in KNOWN))}
    )
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", answer_with(
        lambda ids: [{"id": ids[0], "action": "delete"}]))  # fmt: skip
    run = await add_and_wait(
        engine, project, {"user_id": "h", "input": says("User prefers light mode.")}
    )
    assert run.status == "completed", run.error


async def test_a_restatement_the_model_keeps_writes_nothing(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await add_and_wait(
        engine, project, {"user_id": "r", "input": facts(("UserKnowledge", KNOWN[0]))}
    )
    llm.script("extract", echo_extract)
    # The model keeps the new copy and rewrites the old one to itself.
    llm.script("transform_with_context", answer_with(
        lambda ids: [{"id": ids[0], "action": "rewrite", "content": "User prefers dark mode"}]))  # fmt: skip
    run = await add_and_wait(engine, project, {"user_id": "r", "input": says(KNOWN[0])})
    assert run.status == "completed", run.error
    ops = run.committed_operations
    assert ops is not None and (ops.created, ops.updated, ops.deleted) == ([], [], [])
    [memory] = await listing(engine, project, user_id="r")
    assert await engine.memory_history(project, "default", "r", memory.id) == []
