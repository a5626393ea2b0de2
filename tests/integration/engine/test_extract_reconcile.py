"""One LLM call extracts and reconciles when the scope's close memories fit the prompt
(`steps.extract_reconcile`), against the scripted server; otherwise the two calls."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mnemo.core.engine import Engine
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from tests.integration.conftest import echo_extract, engine_settings, scripted_client
from tests.integration.conftest import user_payload as body_of
from tests.integration.engine.helpers import add, add_and_wait, facts, listing, says
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
DARK, LIGHT, LISBON = "User prefers dark mode.", "User prefers light mode.", "User lives in Lisbon."
KEEP = {"existing": [], "new": [{"index": 0, "action": "keep"}]}


class RecordingEmbedder(HashEmbedder):
    """The hash embedder, keeping every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += texts
        return await super().embed(texts)


@contextlib.asynccontextmanager
async def started(
    postgres: EmbeddedPostgres,
    llm: ScriptedLLMServer,
    tmp_path: Path,
    max_chars: int,
    embedder: HashEmbedder | None = None,
) -> AsyncIterator[Engine]:
    settings = engine_settings(
        postgres.new_database(), tmp_path, extract_reconcile_max_chars=max_chars
    )
    engine = await start_engine(
        settings, llm=scripted_client(llm), embedder=embedder or HashEmbedder()
    )
    try:
        yield engine
    finally:
        await engine.close()


@pytest.fixture
async def combined(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path
) -> AsyncIterator[Engine]:
    async with started(postgres, llm, tmp_path, 6000) as engine:
        yield engine


def calls(llm: ScriptedLLMServer) -> dict[str, int]:
    names = ("extract", "transform_with_context", "extract_reconcile")
    return {n: len(llm.calls_for(n)) for n in names}


async def _dark(engine: Engine, project: str, user: str) -> str:
    await add_and_wait(engine, project, {"user_id": user, "input": facts(("UserKnowledge", DARK))})
    [memory] = await listing(engine, project, user_id=user)
    return memory.id


def answer(memories: list[str], existing: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "memories": [{"topic": "UserKnowledge", "content": m} for m in memories],
        "existing": existing,
    }


async def test_one_call_keeps_both_and_shows_the_close_memory(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    dark = await _dark(combined, project, "k")
    llm.script("extract_reconcile", answer([LIGHT], []))
    run = await add_and_wait(combined, project, {"user_id": "k", "input": says(LIGHT)})
    assert run.status == "completed", run.error
    assert calls(llm) == {"extract": 0, "transform_with_context": 0, "extract_reconcile": 1}
    [request] = llm.calls_for("extract_reconcile")
    shown = body_of(request)
    assert shown["input"] == [LIGHT]
    assert [(m["id"], m["content"]) for m in shown["existing"]] == [(dark, DARK)]
    contents = sorted(m.content for m in await listing(combined, project, user_id="k"))
    assert contents == sorted([DARK, LIGHT])


async def test_one_call_rewrites_an_existing_memory_with_its_history(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    dark = await _dark(combined, project, "r")
    llm.script(
        "extract_reconcile", answer([], [{"id": dark, "action": "rewrite", "content": LIGHT}])
    )
    run = await add_and_wait(combined, project, {"user_id": "r", "input": says(LIGHT)})
    assert run.status == "completed", run.error
    assert calls(llm)["extract_reconcile"] == 1 and calls(llm)["transform_with_context"] == 0
    [memory] = await listing(combined, project, user_id="r")
    assert (memory.id, memory.content) == (dark, LIGHT)
    history = await combined.memory_history(project, "default", "r", dark)
    assert [(v.content, v.change) for v in history] == [(DARK, "updated")]
    assert history[0].run_id == run.run_id


async def test_one_call_deletes_an_existing_memory_and_keeps_the_new_one(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    dark = await _dark(combined, project, "d")
    llm.script("extract_reconcile", answer([LIGHT], [{"id": dark, "action": "delete"}]))
    run = await add_and_wait(combined, project, {"user_id": "d", "input": says(LIGHT)})
    assert run.status == "completed", run.error
    assert [m.content for m in await listing(combined, project, user_id="d")] == [LIGHT]
    history = await combined.memory_history(project, "default", "d", dark)
    assert [(v.content, v.change) for v in history] == [(DARK, "deleted")]


async def test_a_restatement_the_combined_call_returns_writes_nothing(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await _dark(combined, project, "s")
    llm.script("extract_reconcile", answer([DARK], []))
    run = await add_and_wait(combined, project, {"user_id": "s", "input": says(DARK)})
    ops = run.committed_operations
    assert ops is not None and (ops.created, ops.updated, ops.deleted) == ([], [], [])


async def test_an_unknown_id_in_the_combined_answer_fails_the_run_and_writes_nothing(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    await _dark(combined, project, "u")
    llm.script("extract_reconcile", answer([LIGHT], [{"id": "nope", "action": "delete"}]))
    run = await add_and_wait(combined, project, {"user_id": "u", "input": says(LIGHT)})
    assert run.status == "failed"
    assert [m.content for m in await listing(combined, project, user_id="u")] == [DARK]


async def test_an_empty_scope_is_extract_alone(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    llm.script("extract", echo_extract)
    await add_and_wait(combined, project, {"user_id": "e", "input": says(LISBON)})
    assert calls(llm) == {"extract": 1, "transform_with_context": 0, "extract_reconcile": 0}


async def test_a_memory_below_the_floor_is_shown_as_it_costs_no_call(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    dark = await _dark(combined, project, "n")
    llm.script("extract_reconcile", answer([LISBON], []))
    await add_and_wait(combined, project, {"user_id": "n", "input": says(LISBON)})
    assert calls(llm) == {"extract": 0, "transform_with_context": 0, "extract_reconcile": 1}
    [request] = llm.calls_for("extract_reconcile")
    assert [m["id"] for m in body_of(request)["existing"]] == [dark]


async def test_close_memories_that_do_not_fit_take_the_two_calls(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path, project: str
) -> None:
    async with started(postgres, llm, tmp_path, 200) as engine:  # shorter than any prompt
        await _dark(engine, project, "f")
        llm.script("extract", echo_extract)
        llm.script("transform_with_context", KEEP)
        await add_and_wait(engine, project, {"user_id": "f", "input": says(LIGHT)})
        contents = sorted(m.content for m in await listing(engine, project, user_id="f"))
    assert calls(llm) == {"extract": 1, "transform_with_context": 1, "extract_reconcile": 0}
    assert contents == sorted([DARK, LIGHT])


async def test_the_combined_call_runs_in_the_scope_order_after_the_earlier_commit(
    combined: Engine, llm: ScriptedLLMServer, project: str
) -> None:
    dark = await _dark(combined, project, "o")
    first, second = "User prefers light mode at work.", "User prefers light mode at home."

    def rewrite_the_newest(request: dict[str, Any]) -> dict[str, Any]:
        shown = body_of(request)["existing"]
        return answer([], [{"id": shown[-1]["id"], "action": "rewrite",
                            "content": body_of(request)["input"][0]}])  # fmt: skip

    llm.script("extract_reconcile", rewrite_the_newest)
    # Both adds are queued before either commits: the second's call still sees the first's
    # rewrite, as the memory now is.
    runs = [
        await add(combined, project, {"user_id": "o", "input": says(text)})
        for text in (first, second)
    ]
    for run in runs:
        done = await combined.wait_run(project, run.run_id, 20)
        assert done.status == "completed", done.error
    requests = llm.calls_for("extract_reconcile")
    assert [[m["content"] for m in body_of(r)["existing"]] for r in requests] == [[DARK], [first]]
    [memory] = await listing(combined, project, user_id="o")
    assert (memory.id, memory.content) == (dark, second)
    assert calls(llm)["transform_with_context"] == 0


async def test_a_small_scope_is_shown_whole_newest_first_without_embedding_the_input(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path, project: str
) -> None:
    recorder, bright = RecordingEmbedder(), "User likes bright screens."
    async with started(postgres, llm, tmp_path, 6000, recorder) as engine:
        for fact in (DARK, LISBON):
            await add_and_wait(
                engine, project, {"user_id": "w", "input": facts(("UserKnowledge", fact))}
            )
        recorder.texts.clear()
        llm.script("extract_reconcile", answer([bright], []))
        run = await add_and_wait(engine, project, {"user_id": "w", "input": says(LIGHT)})
    assert run.status == "completed", run.error
    [request] = llm.calls_for("extract_reconcile")
    assert [m["content"] for m in body_of(request)["existing"]] == [LISBON, DARK]
    assert not any(LIGHT in text for text in recorder.texts)  # the input: never embedded
    assert bright in recorder.texts  # the new memory, at commit
    assert calls(llm)["transform_with_context"] == 0  # the call saw the whole scope


async def test_a_scope_past_the_context_limit_shows_the_input_s_nearest(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path, project: str
) -> None:
    recorder = RecordingEmbedder()
    many = [f"User visited city number {i}." for i in range(11)]  # context_limit is 10
    async with started(postgres, llm, tmp_path, 6000, recorder) as engine:
        items = [("UserKnowledge", fact) for fact in many]
        await add_and_wait(engine, project, {"user_id": "m", "input": facts(*items)})
        recorder.texts.clear()
        llm.script("extract_reconcile", answer([LIGHT], []))
        run = await add_and_wait(engine, project, {"user_id": "m", "input": says(LIGHT)})
    assert run.status == "completed", run.error
    [request] = llm.calls_for("extract_reconcile")
    assert len(body_of(request)["existing"]) == 10
    assert any(LIGHT in text for text in recorder.texts[:1])  # the input, to rank them
