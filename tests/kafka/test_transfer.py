"""An export from an embedded mnemo imports losslessly into the distributed one, and one
the distributed pipeline wrote imports losslessly into an embedded one: through the CLI and
each gateway's HTTP API, compared line by line."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mnemo.cli.main import app
from tests.api.live_server import LiveServer, gateway_settings
from tests.kafka.conftest import Cluster
from tests.kafka.helpers import serving
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.transfer import build_project, comparable

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def embedded(
    postgres: EmbeddedPostgres, kafka_llm: ScriptedLLMServer, tmp_path_factory: Any
) -> Iterator[LiveServer]:
    settings = gateway_settings(postgres.new_database("moves"), tmp_path_factory.mktemp("moves"))
    server = LiveServer(settings, kafka_llm).start()
    yield server
    server.stop()


@pytest.fixture
async def distributed(cluster: Cluster) -> AsyncIterator[str]:
    """The distributed gateway with keys required (the suite's own runs keyless)."""
    settings = cluster.settings.model_copy(update={"auth_disabled": False})
    async with serving(settings, cluster.engine) as url:
        yield url


async def _cli(*args: str) -> None:
    done = await asyncio.to_thread(CliRunner().invoke, app, [*args, "--no-progress"])
    assert done.exit_code == 0, done.output


async def _move(source: tuple[str, str], target: tuple[str, str], tmp: Path) -> list[Any]:
    """Export from `source`, import into `target`, export again: both files' records."""
    first, second = tmp / f"{uuid.uuid4().hex}.jsonl", tmp / f"{uuid.uuid4().hex}.jsonl"
    await _cli("export", "-o", str(first), "--url", source[0], "--api-key", source[1])
    await _cli("import", "--memories", str(first), "--url", target[0], "--api-key", target[1])
    await _cli("export", "-o", str(second), "--url", target[0], "--api-key", target[1])
    return [
        [json.loads(line) for line in f.read_text("utf-8").splitlines()] for f in (first, second)
    ]


async def test_embedded_to_distributed_is_lossless(
    cluster: Cluster, embedded: LiveServer, distributed: str, tmp_path: Path
) -> None:
    project = f"moves-{uuid.uuid4().hex[:8]}"
    assert embedded.engine is not None
    await asyncio.to_thread(embedded.run, build_project(embedded.engine, project))
    source = (embedded.url, await asyncio.to_thread(embedded.create_key, project))
    target = (distributed, (await cluster.engine.create_key(project, "moves"))[1])
    before, after = await _move(source, target, tmp_path)
    assert len([r for r in before if r["kind"] == "memory"]) == 7
    assert comparable(after) == comparable(before)


async def test_distributed_to_embedded_is_lossless(
    cluster: Cluster, embedded: LiveServer, distributed: str, tmp_path: Path
) -> None:
    project = f"back-{uuid.uuid4().hex[:8]}"
    await build_project(cluster.engine, project)  # written by the four stage services
    source = (distributed, (await cluster.engine.create_key(project, "moves"))[1])
    target = (embedded.url, await asyncio.to_thread(embedded.create_key, project))
    before, after = await _move(source, target, tmp_path)
    assert len([r for r in before if r["kind"] == "memory"]) == 7
    assert comparable(after) == comparable(before)
