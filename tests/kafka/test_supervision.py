"""`scripts/run-distributed.sh` supervises the stack: a stage killed with -9 is restarted
with backoff and reported, and work goes on; SIGTERM stops everything it started."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from mnemo.kafka.watchdog import RESTART_EXIT_CODE
from tests.kafka.conftest import GROUP, Cluster
from tests.kafka.services import ROOT
from tests.support.ports import free_block
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.kafka


def text_of(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


async def wait_for(path: Path, pattern: str, timeout: float = 240) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while True:
        text = await asyncio.to_thread(text_of, path)
        if found := re.search(pattern, text):
            return found
        assert time.monotonic() < deadline, f"no {pattern!r} in\n{text[-3000:]}"
        await asyncio.sleep(0.5)


def start_script(env: dict[str, str], out: Path) -> subprocess.Popen[bytes]:
    with out.open("wb") as sink:
        return subprocess.Popen(
            ["bash", str(ROOT / "scripts" / "run-distributed.sh")],
            env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


async def test_a_killed_stage_is_restarted_and_work_goes_on(
    cluster: Cluster, postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    if "KAFKA_DATA_DIR" not in os.environ:
        pytest.skip("needs the broker this suite runner started (KAFKA_DATA_DIR exported)")
    # the gateway on base, the stages' /metrics on base+1 .. base+4
    port = base = free_block(4)
    env = {k: v for k, v in cluster.services["extractor"].env.items() if k != "MNEMO_METRICS_PORT"}
    env.update(
        PYTHON=sys.executable, MNEMO_PORT=str(port), MNEMO_METRICS_BASE_PORT=str(base),
        MNEMO_LOG_DIR=str(tmp_path / "logs"), MNEMO_DATABASE_URL=postgres.new_database(),
        MNEMO_KAFKA_TOPIC_PREFIX=f"{cluster.ks.topic_prefix}-sup", MNEMO_AUTH_DISABLED="true",
    )  # fmt: skip
    out = tmp_path / "run-distributed.out"
    script = start_script(env, out)
    try:
        await wait_for(out, r"all started")
        first = (await wait_for(out, r"extractor: pid (\d+)")).group(1)
        os.kill(int(first), signal.SIGKILL)
        await wait_for(out, rf"extractor \(pid {first}\) exited with signal SIGKILL; restarting")
        await wait_for(out, r"extractor: pid (?!" + first + r"\b)\d+")
        # The client outwaits the long-poll; the run waits for the restarted extractor's
        # cold start, which takes minutes on a loaded machine.
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=90) as http:
            assert (await http.put("/v1/groups/kt", json=GROUP)).status_code == 200
            body = {"group": "kt", "user_id": "sup", "input": {"string": {"content": ["I fly"]}}}
            added = await http.post("/v1/memories", json=body)
            assert added.status_code == 200, added.text
            run_id, status = added.json()["run_id"], "running"
            deadline = time.monotonic() + 600
            while status == "running" and time.monotonic() < deadline:
                run = await http.get(f"/v1/runs/{run_id}", params={"wait": 30})
                status = run.json()["status"]
            assert status == "completed", text_of(out)[-3000:]
    finally:
        script.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(script.wait, 90)
    text = text_of(out)
    assert code == 130, text[-3000:]
    pids = [int(p) for p in re.findall(r": pid (\d+) \(log", text)]
    # Besides the killed extractor, a stage may leave on purpose to be started again (status
    # 75: the recovery-stall watchdog or the continuity check, each logging why in its own
    # log); any other exit is a failure.
    exits = re.findall(r"\] (\w+) \(pid (\d+)\) exited with ([^;]+); restarting", text)
    deliberate = [how for _, pid, how in exits if pid != first]
    assert all(how == f"status {RESTART_EXIT_CODE}" for how in deliberate), text[-3000:]
    # gateway, four stages, the restarted extractor, and one more per deliberate restart
    assert len(pids) == 6 + len(deliberate), text[-3000:]
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
