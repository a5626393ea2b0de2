"""Reconcile asks the LLM only when a related memory reaches the similarity floor."""

from __future__ import annotations

import pytest

from mnemo.core.engine import Engine
from mnemo.embeddings.hashing import hash_embedding
from tests.integration.conftest import echo_extract
from tests.integration.engine.helpers import add_and_wait, facts, listing, says
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
DARK, LISBON, LIGHT = "User prefers dark mode.", "User lives in Lisbon.", "User prefers light mode."


def cosine(a: str, b: str) -> float:
    return sum(x * y for x, y in zip(hash_embedding(a), hash_embedding(b), strict=True))


async def test_no_llm_call_without_a_close_enough_memory(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    floor = engine.settings.reconcile_min_similarity
    assert cosine(DARK, LISBON) < floor <= cosine(DARK, LIGHT)  # what the test relies on
    await add_and_wait(engine, project, {"user_id": "f1", "input": facts(("UserKnowledge", DARK))})
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", {"existing": [], "new": [{"index": 0, "action": "keep"}]})

    await add_and_wait(engine, project, {"user_id": "f1", "input": says(LISBON)})
    assert llm.calls_for("transform_with_context") == []
    await add_and_wait(engine, project, {"user_id": "f1", "input": says(LIGHT)})
    assert len(llm.calls_for("transform_with_context")) == 1
    assert len(await listing(engine, project, user_id="f1")) == 3


async def test_a_step_floor_overrides_the_setting(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    document = {
        "topics": [{"name": "UserKnowledge", "description": "Facts.", "scoping": {"user_scoped": True}}],
        "pipeline": {"steps": [
            {"id": "x", "kind": "extract", "input_type": "string", "next": "r"},
            {"id": "r", "kind": "transform_with_context", "next": "c", "min_similarity": -1.0},
            {"id": "p", "kind": "extract", "input_type": "pre_extracted", "next": "c"},
            {"id": "c", "kind": "commit"},
        ]},
    }  # fmt: skip
    await engine.put_group(project, "always", document)
    scope = {"group": "always", "user_id": "f2"}
    await add_and_wait(engine, project, {**scope, "input": facts(("UserKnowledge", DARK))})
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", {"existing": [], "new": [{"index": 0, "action": "keep"}]})
    await add_and_wait(engine, project, {**scope, "input": says(LISBON)})
    assert len(llm.calls_for("transform_with_context")) == 1


async def test_a_change_the_text_rules_see_is_reconciled_below_the_floor(
    engine: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    old, new = "User lives in Riga.", "We finally moved to Oslo."
    assert cosine(old, new) < engine.settings.reconcile_min_similarity  # what the test relies on
    await add_and_wait(engine, project, {"user_id": "f3", "input": facts(("UserKnowledge", old))})
    llm.script("extract", echo_extract)
    llm.script("transform_with_context", {"existing": [], "new": [{"index": 0, "action": "keep"}]})
    await add_and_wait(engine, project, {"user_id": "f3", "input": says(new)})
    assert len(llm.calls_for("transform_with_context")) == 1
