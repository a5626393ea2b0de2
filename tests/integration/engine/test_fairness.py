"""One large add must not stall other users: the offline provider's CPU work runs off the
worker's event loop, and embedding requests are served in turn.

The large add is a 70 KB string of a thousand dissimilar sentences, handled by the offline
provider with the bundled embedding model (what a user without an LLM gets). A one-sentence
add of another user, made once the large one is being extracted, must complete before the
large one's extraction has even returned. The test compares the order of those two events,
never how long either took.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.large_add import dissimilar_sentences
from mnemo.contracts.llm import Prompt
from mnemo.core.engine import Engine
from mnemo.domain.memory import RunState
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.local import LocalEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.prompts import extract
from tests.integration.conftest import engine_settings
from tests.integration.engine.helpers import add, says, submit_past_admission
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration


class ObservedLLM:
    """The offline provider, noting when the large add's extraction starts and returns."""

    def __init__(self, inner: OfflineLLM) -> None:
        self.inner = inner
        self.label = inner.label
        self.large_started = asyncio.Event()
        self.large_returned_at: datetime | None = None

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Any:
        large = (
            prompt.name == extract.PROMPT.name and sum(len(u.text) for u in context.units) > 10_000
        )
        if large:
            self.large_started.set()
        answer = await self.inner.complete(prompt, context)
        if large:
            self.large_returned_at = datetime.now(UTC)
        return answer

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def offline(
    postgres: EmbeddedPostgres, tmp_path: Path
) -> AsyncIterator[tuple[Engine, ObservedLLM]]:
    embedder = LocalEmbedder()
    llm = ObservedLLM(OfflineLLM(embedder))
    settings = engine_settings(postgres.new_database(), tmp_path, workers=4)
    engine = await start_engine(settings, llm=llm, embedder=embedder)  # type: ignore[arg-type]
    yield engine, llm
    await engine.close()


async def test_a_small_add_of_another_user_completes_while_a_large_one_is_extracted(
    offline: tuple[Engine, ObservedLLM], project: str
) -> None:
    engine, llm = offline
    text = dissimilar_sentences(1000)
    assert len(text.encode()) > 65_000
    large = await submit_past_admission(engine, project, "large", {"string": {"content": [text]}})
    await asyncio.wait_for(llm.large_started.wait(), 120)
    small = await add(engine, project, {"user_id": "small", "input": says("I like green tea.")})
    small_done = await engine.wait_run(project, small.run_id, 120)
    assert small_done.status == RunState.completed
    assert llm.large_returned_at is None or small_done.updated_at < llm.large_returned_at

    large_done = await engine.wait_run(project, large, 300)
    assert large_done.status == RunState.completed, large_done.error
    assert large_done.committed_operations is not None
    assert len(large_done.committed_operations.created) >= 990  # one memory per sentence
