"""kill -9 a worker process mid-run, restart it: no acknowledged run is lost or applied twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.memory import RunState
from mnemo.embedded.startup import start_engine
from mnemo.embeddings.hashing import HashEmbedder
from tests.integration.conftest import engine_settings, script_echo_pipeline, scripted_client
from tests.integration.engine.helpers import add, listing, says
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


def start_worker(database_url: str, llm_url: str, data_dir: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}",
        "MNEMO_DATABASE_URL": database_url,
        "MNEMO_DATA_DIR": str(data_dir),
        "MNEMO_LLM_BASE_URL": llm_url,
        "MNEMO_LLM_API_KEY": "x",
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_WORKERS": "4",
        "MNEMO_BUS_POLL_SECONDS": "0.05",
        "MNEMO_EXTRACT_RECONCILE_MAX_CHARS": "0",  # the two scripted calls, as the engine's
    }
    return subprocess.Popen(
        [sys.executable, "-m", "mnemo.embedded"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def statuses(engine: Engine, project: str, run_ids: list[str]) -> Counter[str]:
    return Counter([(await engine.get_run(project, r)).status.value for r in run_ids])


async def wait_for(
    engine: Engine, project: str, run_ids: list[str], at_least: int, timeout: float
) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while (await statuses(engine, project, run_ids))["completed"] < at_least:
        assert asyncio.get_running_loop().time() < deadline, await statuses(
            engine, project, run_ids
        )
        await asyncio.sleep(0.05)


async def test_kill_9_loses_nothing_and_commits_nothing_twice(
    postgres: EmbeddedPostgres, llm: ScriptedLLMServer, tmp_path: Path, project: str
) -> None:
    script_echo_pipeline(llm)
    llm.delay_seconds = 0.05
    settings = engine_settings(postgres.new_database(), tmp_path)
    engine = await start_engine(
        settings, llm=scripted_client(llm), embedder=HashEmbedder(), run_workers=False
    )
    try:
        run_ids = [
            (
                await add(engine, project, {"user_id": f"u{i % 8}", "input": says(f"fact {i}")})
            ).run_id
            for i in range(48)
        ]
        for kill_after in (6, 20):
            worker = start_worker(settings.database_url or "", llm.base_url, tmp_path)
            await wait_for(engine, project, run_ids, kill_after, timeout=60)
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
            assert (await statuses(engine, project, run_ids))["completed"] < len(run_ids)
        worker = start_worker(settings.database_url or "", llm.base_url, tmp_path)
        try:
            await wait_for(engine, project, run_ids, len(run_ids), timeout=90)
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
        created = Counter()
        for run_id in run_ids:
            run = await engine.get_run(project, run_id)
            assert run.status == RunState.completed
            assert run.committed_operations is not None
            assert len(run.committed_operations.created) == 1
            created[run.committed_operations.created[0].memory_id] += 1
        assert set(created.values()) == {1}
        contents = Counter()
        for u in range(8):
            contents.update(
                m.content for m in await listing(engine, project, user_id=f"u{u}", limit=100)
            )
        assert contents == Counter(f"fact {i}" for i in range(48))
    finally:
        await engine.close()
