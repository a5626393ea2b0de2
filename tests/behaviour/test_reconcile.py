"""Reconcile keeps, rewrites and deletes committed memories, with their history."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mnemo.domain.requests import NotFound
from tests.behaviour.conftest import Mode
from tests.behaviour.helpers import add, completed, listing
from tests.behaviour.test_drafts import RECONCILED


def _body(request: dict[str, Any]) -> dict[str, Any]:
    user = next(m for m in request["messages"] if m["role"] == "user")
    return dict(json.loads(user["content"]))


def decide(action: str) -> Any:
    """Every existing memory shown gets `action` (a rewrite takes the new item's content);
    new items are kept only when nothing existed."""

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        body = _body(request)
        existing, new = body["existing"], body["new"]
        content = new[0]["content"] if new else None
        return {
            "existing": [{"id": m["id"], "action": action, "content": content} for m in existing],
            "new": [{"index": m["index"], "action": "delete" if existing else "keep"}
                    for m in new],
        }  # fmt: skip

    return answer


async def said(mode: Mode, project: str, text: str) -> None:
    run = await add(mode, project, "r", "u", {"string": {"content": [text]}})
    await completed(mode, project, run.run_id)


async def test_keep_rewrite_and_delete_with_history(mode: Mode, project: str) -> None:
    await mode.engine.put_group(project, "r", RECONCILED)
    mode.llm.script("transform_with_context", decide("keep"))
    await said(mode, project, "I live in Paris")
    [first] = await listing(mode, project, "r", "u")
    await said(mode, project, "I live in Paris now")  # keep: the memory stands unchanged
    assert [(m.id, m.content) for m in await listing(mode, project, "r", "u")] == [
        (first.id, "User said: I live in Paris")
    ]
    shown = _body(mode.llm.calls_for("transform_with_context")[-1])["existing"]
    assert [m["id"] for m in shown] == [first.id]

    mode.llm.script("transform_with_context", decide("rewrite"))
    await said(mode, project, "I live in Berlin")
    [rewritten] = await listing(mode, project, "r", "u")
    assert (rewritten.id, rewritten.content) == (first.id, "User said: I live in Berlin")
    history = await mode.engine.memory_history(project, "r", "u", first.id)
    assert [v.content for v in history] == ["User said: I live in Paris"]

    mode.llm.script("transform_with_context", decide("delete"))
    await said(mode, project, "I live in Berlin no more")
    assert await listing(mode, project, "r", "u") == []
    with pytest.raises(NotFound):
        await mode.engine.get_memory(project, "r", "u", first.id)
    history = await mode.engine.memory_history(project, "r", "u", first.id)
    assert [v.content for v in history] == [
        "User said: I live in Paris",
        "User said: I live in Berlin",
    ]
