"""Pipeline workers in separate processes beside an engine that only accepts adds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mnemo.embeddings.hashing import HashEmbedder
from mnemo.engine.engine import Engine
from mnemo.engine.processes import spawn_workers
from tests.integration.conftest import engine_settings, script_echo_pipeline, scripted_client
from tests.integration.engine.helpers import add, listing, says
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


async def test_worker_processes_run_the_pipeline_and_stop_cleanly(
    postgres: EmbeddedPostgres,
    llm: ScriptedLLMServer,
    tmp_path: Path,
    project: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script_echo_pipeline(llm)
    for name, value in {
        "MNEMO_LLM_BASE_URL": llm.base_url,
        "MNEMO_LLM_API_KEY": "x",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_BUS_POLL_SECONDS": "0.05",
    }.items():
        monkeypatch.setenv(name, value)
    settings = engine_settings(postgres.new_database(), tmp_path, workers=2)
    engine = await Engine.start(
        settings, llm=scripted_client(llm), embedder=HashEmbedder(), run_workers=False
    )
    workers = spawn_workers(settings, engine.database.url, 2)
    try:
        await workers.wait_ready(120)
        assert all(f.exists() for f in workers.ready_files)
        runs = [
            await add(engine, project, {"user_id": f"u{i % 3}", "input": says(f"fact {i}")})
            for i in range(9)
        ]
        done = await asyncio.gather(*(engine.wait_run(project, r.run_id, 60) for r in runs))
        assert {r.status for r in done} == {"completed"}
        assert sorted(m.content for m in await listing(engine, project, user_id="u0")) == [
            "fact 0",
            "fact 3",
            "fact 6",
        ]
    finally:
        await asyncio.to_thread(workers.stop)
        await engine.close()
    assert all(w.returncode is not None for w in workers.processes)
    assert not any(f.exists() for f in workers.ready_files)
