"""Keys never reach `mnemo serve`'s log: a new key is shown on a terminal only, scripts take
it from `--print-key-to FILE`, and query strings (where a client may put a key) are
redacted from the access log."""

from __future__ import annotations

import os
import pty
import select
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.ports import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def served(
    database_url: str, data_dir: Path, *options: str, stderr: int | None = None
) -> Iterator[tuple[str, Path]]:
    """`mnemo serve` on loopback: (its URL, the file its stdout, and unless `stderr` is
    given its stderr, go to)."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_DATABASE_URL": database_url,
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_WORKER_PROCESSES": "0",
        "MNEMO_WORKERS": "2",
        "MNEMO_DB_POOL_SIZE": "5",
    }
    log_path = data_dir / f"serve-{port}.log"
    command = [sys.executable, "-m", "mnemo.cli.main", "serve", "--port", str(port)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command, "--data-dir", str(data_dir), *options],
            env=env,
            stdout=log,
            stderr=log if stderr is None else stderr,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, log_path.read_text()
                try:
                    if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            yield url, log_path
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def verify(url: str, key: str) -> int:
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{url}/v1/auth/verify", headers=headers, timeout=10).status_code


def test_without_a_terminal_no_key_is_made_and_query_strings_stay_out_of_the_log(
    postgres: Any, tmp_path: Path
) -> None:
    with served(postgres.new_database(), tmp_path) as (url, log):
        secret = "mnemo_in-a-query-string-0123456789"
        refused = httpx.get(f"{url}/v1/auth/verify", params={"api_key": secret}, timeout=10)
        assert refused.status_code == 401
        assert httpx.get(f"{url}/health", params={"token": secret}).status_code == 200
    text = log.read_text()
    assert "mnemo serve --print-key-to FILE" in text and "created a local API key" not in text
    assert secret not in text
    assert "/health?token=***" in text  # the access log still shows the request


def test_print_key_to_writes_a_private_key_file_kept_across_restarts(
    postgres: Any, tmp_path: Path
) -> None:
    database = postgres.new_database()
    key_file = tmp_path / "secrets" / "mnemo.key"
    with served(database, tmp_path, "--print-key-to", str(key_file)) as (url, log):
        key = key_file.read_text().strip()
        assert verify(url, key) == 204
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key not in log.read_text()
    with served(database, tmp_path, "--print-key-to", str(key_file)) as (url, log):
        assert key_file.read_text().strip() == key  # still valid: kept, no new key
        assert verify(url, key) == 204
    assert key not in log.read_text()


def test_on_a_terminal_a_new_key_is_shown_there_and_not_logged(
    postgres: Any, tmp_path: Path
) -> None:
    terminal, stderr = pty.openpty()
    shown = b""
    try:
        with served(postgres.new_database(), tmp_path, stderr=stderr) as (url, log):
            while b"export MNEMO_URL" not in shown:
                ready, _, _ = select.select([terminal], [], [], 60)
                assert ready, shown
                shown += os.read(terminal, 65536)
            line = next(t for t in shown.decode().splitlines() if "created a local API key" in t)
            key = line.rsplit(" ", 1)[1].strip()
            assert verify(url, key) == 204
        assert key not in log.read_text()
    finally:
        os.close(terminal)
        os.close(stderr)
