"""Pipeline workers in separate processes beside an engine that only accepts adds."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mnemo.embedded.processes import spawn_workers
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
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
        # The worker processes read their settings from the environment: the two scripted
        # calls, as the engine's settings say.
        "MNEMO_EXTRACT_RECONCILE_MAX_CHARS": "0",
    }.items():
        monkeypatch.setenv(name, value)
    settings = engine_settings(postgres.new_database(), tmp_path, workers=2)
    engine = await start_engine(
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


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in state  # a zombie has exited; nobody may reap it here


async def test_worker_processes_stop_when_their_server_dies_without_stopping_them(
    postgres: EmbeddedPostgres,
    llm: ScriptedLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {
        "MNEMO_LLM_BASE_URL": llm.base_url,
        "MNEMO_LLM_API_KEY": "x",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_DATA_DIR": str(tmp_path),
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }.items():
        monkeypatch.setenv(name, value)
    server = textwrap.dedent(f"""
        import asyncio, time
        from mnemo.embedded.processes import spawn_workers
        from mnemo.settings import Settings
        workers = spawn_workers(Settings(), {postgres.new_database()!r}, 1)
        asyncio.run(workers.wait_ready(120))
        print(workers.processes[0].pid, flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen(  # noqa: ASYNC220 - a plain child to SIGKILL later
        [sys.executable, "-c", server], stdout=subprocess.PIPE
    )
    try:
        assert parent.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(parent.stdout.readline), 120)
        worker_pid = int(line)
        assert _alive(worker_pid)
        parent.kill()  # SIGKILL: no chance to stop its workers
        parent.wait()
        for _ in range(150):
            if not _alive(worker_pid):
                break
            await asyncio.sleep(0.1)
        assert not _alive(worker_pid), "the orphaned worker process kept running"
    finally:
        parent.kill()
