"""The "Move from Engram" guide (docs/guides/move-from-engram.md), run as written: its
bash and python blocks, in order, against the Engram stand-in and a live mnemo."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.api.live_server import LiveServer, gateway_settings
from tests.cli.test_engram_pull import sentence
from tests.support.engram_standin import EngramStandin, StandinMemory, topic
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "move-from-engram.md"
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.M | re.S)


@pytest.fixture
def target(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path_factory: Any
) -> Iterator[LiveServer]:
    settings = gateway_settings(
        postgres.new_database("guide"), Path(tmp_path_factory.mktemp("guide"))
    )
    server = LiveServer(settings, llm_server).start()
    yield server
    server.stop()


def test_the_guide_runs_as_written(target: LiveServer, tmp_path: Path) -> None:
    assert GUIDE.read_text("utf-8").startswith(
        f"<!-- examples: tested by tests/docs/{Path(__file__).name} -->"
    )
    standin = EngramStandin({"default": [topic("UserKnowledge")]}).start()
    try:
        rng = random.Random(5)
        start = datetime(2026, 6, 1, tzinfo=UTC)
        for i in range(180):
            user = "alice" if i % 6 else "bob@example.com"
            standin.add(StandinMemory(sentence(rng, f"fact {i}"), "UserKnowledge",
                                      start + timedelta(hours=i), user_id=user))  # fmt: skip
        env = {**os.environ, "ENGRAM_URL": standin.url, "ENGRAM_KEY": standin.key,
               "MNEMO_URL": target.url, "MNEMO_API_KEY": target.create_key("guide"),
               "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # fmt: skip
        outputs = []
        for kind, code in BLOCK.findall(GUIDE.read_text("utf-8")):
            command = ["bash", "-euo", "pipefail", "-c", code] if kind == "bash" else [
                sys.executable, "-c", code]  # fmt: skip
            done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True,
                                  text=True, timeout=600)  # fmt: skip
            assert done.returncode == 0, (code, done.stdout, done.stderr)
            outputs.append(done.stdout + done.stderr)
    finally:
        standin.stop()
    dry = json.loads((tmp_path / "dry-run.json").read_text("utf-8"))
    pulled = json.loads((tmp_path / "pull.json").read_text("utf-8"))
    assert dry["dry_run"] and dry["read"] == 180 and dry["written"] == 180
    assert pulled["complete"] and pulled["read"] == pulled["new"] == 180
    assert "True 180 180 []" in "".join(outputs)
    assert any("would write 180" in o for o in outputs)
