"""A full disk is an outage, not a failure (issue 33, failure 3): adds answer 503 with
Retry-After, /readyz says why it is not ready, an acknowledged run retries with backoff
instead of failing, and completes once space is back.

The disk fills in Postgres itself: a trigger raises the error Postgres raises when it cannot
extend a file (SQLSTATE 53100, `disk_full`), so the client sees exactly that error class, and
counts its hits in a sequence (which a rollback does not undo)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.api.live_server import LiveServer, gateway_settings
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


@pytest.fixture
def server(
    postgres: EmbeddedPostgres, llm_server: ScriptedLLMServer, tmp_path: Path
) -> Iterator[tuple[LiveServer, str]]:
    url = postgres.new_database("diskfull")
    settings = gateway_settings(url, tmp_path, auth_disabled=True)
    live = LiveServer(settings, llm_server).start()
    try:
        yield live, url
    finally:
        live.stop()


def fill_disk(url: str, table: str) -> None:
    """From now on, every row written to `table` fails as on a full disk."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE IF NOT EXISTS disk_full_hits")
        conn.execute(
            "CREATE OR REPLACE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN PERFORM nextval('disk_full_hits'); RAISE EXCEPTION "
            "'could not extend file \"base/1/2\": No space left on device' "
            "USING ERRCODE = 'disk_full'; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER disk_full BEFORE INSERT OR UPDATE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION disk_full()"
        )


def free_disk(url: str, table: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP TRIGGER disk_full ON {table}")


def hits(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT last_value, is_called FROM disk_full_hits").fetchone()
    assert row is not None
    return int(row[0]) if row[1] else 0


def wait_for(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def add(base: str, content: str) -> httpx.Response:
    body = {"user_id": "u1", "input": {"string": {"content": [content]}}}
    return httpx.post(f"{base}/v1/memories", json=body, timeout=60)


def test_an_add_on_a_full_disk_is_503_and_readyz_says_why(
    server: tuple[LiveServer, str],
) -> None:
    live, url = server
    fill_disk(url, "runs")
    refused = add(live.url, "I like tea")
    assert refused.status_code == 503, refused.text
    assert int(refused.headers["retry-after"]) > 0
    assert refused.headers["content-type"] == "application/problem+json"
    ready = httpx.get(f"{live.url}/readyz")
    assert ready.status_code == 503
    [failing] = [e for e in ready.json()["errors"] if e["location"] == "database_writes"]
    assert "DiskFull" in failing["message"] and "No space left" in failing["message"]

    free_disk(url, "runs")
    accepted = add(live.url, "I like tea")
    assert accepted.status_code == 200, accepted.text
    assert httpx.get(f"{live.url}/readyz").status_code == 200


def test_an_acknowledged_run_waits_out_a_full_disk_and_completes(
    server: tuple[LiveServer, str],
) -> None:
    live, url = server
    fill_disk(url, "memories")  # the add is recorded; its commit step cannot write
    content = f"I keep {uuid.uuid4().hex[:8]} bees"
    accepted = add(live.url, content)
    assert accepted.status_code == 200, accepted.text
    run_id = accepted.json()["run_id"]
    wait_for(lambda: hits(url) >= 3, 60, "the commit to meet the full disk three times")
    run = httpx.get(f"{live.url}/v1/runs/{run_id}").json()
    assert run["status"] == "running", run  # retried, not failed

    free_disk(url, "memories")
    done = httpx.get(f"{live.url}/v1/runs/{run_id}", params={"wait": 30}, timeout=60).json()
    assert done["status"] == "completed", done
    listed = httpx.post(f"{live.url}/v1/memories/list", json={"user_id": "u1"}).json()
    assert [m["content"] for m in listed["memories"]] == [f"User said: {content}"]
