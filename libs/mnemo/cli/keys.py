"""`mnemo keys create|list|revoke`: manage API keys directly in the database.

These commands open the database through the Engine without workers, so they work while
the server is down (and need the same MNEMO_DATABASE_URL / --data-dir as the server).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer

from mnemo.cli.common import DataDirOption, ProjectOption, settings_with
from mnemo.core.engine import Engine
from mnemo.engine.embedded import start_engine

T = TypeVar("T")

app = typer.Typer(
    help="Create, list and revoke API keys (one project per key).", no_args_is_help=True
)


def with_engine(
    settings_overrides: dict[str, object], action: Callable[[Engine], Awaitable[T]]
) -> T:
    """Run `action` against an Engine that has no workers, then close it."""

    async def main() -> T:
        engine = await start_engine(settings_with(**settings_overrides), run_workers=False)
        try:
            return await action(engine)
        finally:
            await engine.close()

    return asyncio.run(main())


@app.command("create")
def create(
    name: Annotated[str, typer.Option("--name", help="A label for the key")] = "cli",
    project: ProjectOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """Create a key and print ONLY the secret on stdout (it is never shown again)."""

    async def action(engine: Engine) -> str:
        _, secret = await engine.create_key(project or engine.settings.project, name)
        return secret

    typer.echo(with_engine({"data_dir": data_dir}, action))


@app.command("list")
def list_(project: ProjectOption = None, data_dir: DataDirOption = None) -> None:
    """List keys: id, project, name, prefix, created, revoked."""
    keys = with_engine({"data_dir": data_dir}, lambda engine: engine.list_keys(project))
    for key in keys:
        revoked = key.revoked_at.isoformat() if key.revoked_at else "-"
        typer.echo(
            f"{key.id}\t{key.project}\t{key.name}\t{key.prefix}...\t"
            f"{key.created_at.isoformat()}\t{revoked}"
        )


@app.command("revoke")
def revoke(key_id: str, data_dir: DataDirOption = None) -> None:
    """Revoke a key by id (see `mnemo keys list`)."""
    if not with_engine({"data_dir": data_dir}, lambda engine: engine.revoke_key(key_id)):
        typer.echo(f"no active key with id {key_id}", err=True)
        raise typer.Exit(code=1)
    typer.echo(f"revoked {key_id}", err=True)
