"""The Alembic migrations build exactly the schema `mnemo.store.schema` declares."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from mnemo.store.database import _async_url, migrate
from mnemo.store.schema import metadata
from tests.support.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration


def test_migrations_match_the_declared_schema(postgres: EmbeddedPostgres) -> None:
    url = postgres.new_database("schema")
    migrate(url, 384)
    engine = create_engine(_async_url(url).replace("+psycopg", "+psycopg", 1))
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": False}
            )
            diff: list[Any] = compare_metadata(context, metadata)
    finally:
        engine.dispose()
    assert diff == [], "\n".join(repr(d) for d in diff)
