"""Options and helpers shared by the CLI commands; settings are built per command.

Imports stay light here: every command loads this module, so the client, the engine and
the settings are imported inside the helpers that need them (`mnemo search` must not pay
for the embedded engine; see tests/cli/test_import_graph.py).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from mnemo.client import MnemoClient
    from mnemo.client.errors import MnemoError
    from mnemo.settings import Settings

DEFAULT_URL = "http://127.0.0.1:8080"

UrlOption = Annotated[
    str, typer.Option("--url", envvar="MNEMO_URL", help="Base URL of the mnemo server")
]
ApiKeyOption = Annotated[
    str | None, typer.Option("--api-key", envvar="MNEMO_API_KEY", help="API key (Bearer)")
]
DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data directory (embedded Postgres lives in DATA_DIR/pg)"),
]
ProjectOption = Annotated[
    str | None, typer.Option("--project", help="Project (default: MNEMO_PROJECT or 'default')")
]
UserOption = Annotated[str | None, typer.Option("--user", "-u", help="user_id")]
GroupOption = Annotated[str | None, typer.Option("--group", "-g", help="group (default 'default')")]
PropertyOption = Annotated[
    list[str] | None, typer.Option("--property", "-p", help="KEY=VALUE, repeatable")
]


def settings_with(**overrides: Any) -> Settings:
    """Settings from the environment, with the options the user actually gave on top. A
    misspelt `MNEMO_` variable ends the command with one line and exit code 2 (a usage
    error), before anything is created."""
    from pydantic import ValidationError

    from mnemo.settings import Settings, UnknownVariables

    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except UnknownVariables as exc:
        typer.echo(f"mnemo: {exc}", err=True)
        raise typer.Exit(code=2) from None
    except ValidationError as exc:  # an option or variable out of range: name it, no traceback
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "settings"
            typer.echo(f"mnemo: {where}: {error['msg']} (got {error.get('input')!r})", err=True)
        raise typer.Exit(code=2) from None


@asynccontextmanager
async def opened_database(settings: Settings) -> AsyncIterator[AsyncEngine]:
    """The store's database (the replays consult its tombstones and retention)."""
    from mnemo.store.database import connect

    database = await connect(
        settings.database_url, settings.data_dir, settings.embedding_dim, 2,
        settings.hnsw_ef_search,
    )  # fmt: skip
    try:
        yield database.db
    finally:
        await database.close()


@contextmanager
def remote_client(url: str, api_key: str | None) -> Iterator[MnemoClient]:
    """A client for the server at `url`; client errors end the command with `fail`."""
    from mnemo.client import MnemoClient
    from mnemo.client.errors import MnemoError

    try:
        with MnemoClient(base_url=url, api_key=api_key) as client:
            yield client
    except MnemoError as exc:
        raise fail(exc) from exc


def parse_properties(pairs: list[str] | None) -> dict[str, str] | None:
    if not pairs:
        return None
    properties: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--property")
        properties[key] = value
    return properties


def to_jsonable(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


def print_json(value: Any) -> None:
    typer.echo(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2))


def fail(exc: MnemoError) -> typer.Exit:
    """Report a client error on stderr and return the exit to raise."""
    typer.echo(f"error: {exc}", err=True)
    for error in getattr(exc, "errors", []):
        typer.echo(f"  {error.get('location')}: {error.get('message')}", err=True)
    return typer.Exit(code=1)
