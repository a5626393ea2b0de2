"""The offline provider's `transform_with_context` heuristics."""

from __future__ import annotations

from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.prompts import transform_with_context as twc


def _context(existing: list[str], new: list[str]) -> twc.Context:
    return twc.Context(
        instructions="",
        existing=[
            twc.ExistingMemory(id=f"m{i + 1}", topic="UserKnowledge", content=c)
            for i, c in enumerate(existing)
        ],
        new=[twc.NewMemory(index=i, topic="UserKnowledge", content=c) for i, c in enumerate(new)],
    )


async def _answer(existing: list[str], new: list[str]) -> twc.Response:
    return await OfflineLLM(HashEmbedder()).complete(twc.PROMPT, _context(existing, new))


def _actions(answer: twc.Response) -> tuple[dict, dict]:
    existing = {d.id: (d.action, d.content) for d in answer.existing}
    new = {d.index: (d.action, d.content) for d in answer.new}
    return existing, new


async def test_preference_change_rewrites_the_existing_memory() -> None:
    answer = await _answer(["User prefers dark mode."], ["User prefers light mode now."])
    existing, new = _actions(answer)
    assert existing == {"m1": ("rewrite", "User prefers light mode now.")}
    assert new == {0: ("delete", None)}


async def test_promotion_rewrites_the_job_and_keeps_unrelated_memories() -> None:
    answer = await _answer(
        ["User works as a machine learning engineer.", "User works from home."],
        ["User has been promoted to CEO."],
    )
    existing, new = _actions(answer)
    assert existing["m1"] == (
        "rewrite",
        "User has been promoted to CEO.",
    )
    assert existing["m2"][0] == "keep"
    assert new == {0: ("delete", None)}


async def test_duplicate_new_memory_is_deleted() -> None:
    answer = await _answer(["User works from home."], ["user works from home"])
    existing, new = _actions(answer)
    assert existing == {"m1": ("keep", None)}
    assert new == {0: ("delete", None)}


async def test_unrelated_new_memory_is_kept() -> None:
    answer = await _answer(["User prefers dark mode."], ["User has a dog named Rex."])
    existing, new = _actions(answer)
    assert existing == {"m1": ("keep", None)}
    assert new == {0: ("keep", None)}


async def test_multi_valued_verbs_need_an_explicit_change() -> None:
    kept = await _answer(["User likes hiking in the Alps."], ["User likes skiing in the Alps."])
    assert _actions(kept)[1] == {0: ("keep", None)}
    changed = await _answer(
        ["User likes coffee in the morning."], ["User likes tea in the morning now."]
    )
    assert _actions(changed)[0] == {"m1": ("rewrite", "User likes tea in the morning now.")}


async def test_move_rewrites_the_location() -> None:
    answer = await _answer(["User lives in Berlin."], ["User moved to Munich."])
    assert _actions(answer)[0] == {"m1": ("rewrite", "User moved to Munich.")}


async def test_same_context_gives_the_same_decisions() -> None:
    existing = ["User prefers dark mode.", "User works from home."]
    new = ["User prefers light mode now.", "User works from home.", "User studies law."]
    assert await _answer(existing, new) == await _answer(existing, new)
