"""`mnemo reembed` as an operator runs it: the configured embedder's vectors in place of
another model's, then nothing to do; a refusal exits 2 with the reason."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mnemo.cli.main import app
from mnemo.store.database import connect
from tests.support.embedders import SaltedEmbedder
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration


def test_reembed_converts_then_has_nothing_to_do(
    postgres: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres.new_database("cli_reembed")

    async def made_by_another_model() -> None:
        database = await connect(url, tmp_path, 384, 1, 40, SaltedEmbedder())
        await database.close()

    asyncio.run(made_by_another_model())
    monkeypatch.setenv("MNEMO_DATABASE_URL", url)
    monkeypatch.setenv("MNEMO_EMBEDDING_PROVIDER", "hash")

    first = CliRunner().invoke(app, ["reembed", "--data-dir", str(tmp_path)])
    assert first.exit_code == 0, first.output
    assert "re-embedded with hash:384 (before: salted:other)" in first.output
    again = CliRunner().invoke(app, ["reembed", "--data-dir", str(tmp_path)])
    assert again.exit_code == 0 and "nothing to do" in again.output

    monkeypatch.setenv("MNEMO_EMBEDDING_DIM", "256")
    refused = CliRunner().invoke(app, ["reembed", "--data-dir", str(tmp_path)])
    assert refused.exit_code == 2
    assert "stores 384-dimensional embeddings" in refused.output
    assert "mnemo export" in refused.output  # another size moves by export and import
