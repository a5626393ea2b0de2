"""`mnemo keys create|list|revoke`: manage API keys directly in the database.

These commands open only the database (no embedding model, no LLM, no workers), so they
work while the server is down and answer in the time Postgres takes to start or join. They
need the same MNEMO_DATABASE_URL / --data-dir as the server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from mnemo.cli.common import DataDirOption, ProjectOption, settings_with

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from mnemo.store.keys import ApiKey

T = TypeVar("T")

app = typer.Typer(
    help="Create, list and revoke API keys (one project per key).",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: rich costs more than the rest of `--help` (main.py)
)


def with_database(
    data_dir: Path | None, action: Callable[[AsyncConnection], Awaitable[T]], init: bool = False
) -> T:
    """Run `action` in one transaction on the configured database, then let go of it. An
    embedded data dir that holds no mnemo database is refused (exit 1) unless `init`: a
    mistyped --data-dir would otherwise get a fresh database, and a key no server accepts."""
    import asyncio

    from mnemo.store.database import connect

    settings = settings_with(data_dir=data_dir)
    pg_dir = settings.data_dir / "pg"
    if settings.database_url is None and not init and not (pg_dir / "PG_VERSION").is_file():
        typer.echo(
            f"mnemo keys: no mnemo database in {settings.data_dir} ({pg_dir} holds none); "
            "check --data-dir or MNEMO_DATA_DIR, or pass --init to create one there",
            err=True,
        )
        raise typer.Exit(code=1)

    async def main() -> T:
        database = await connect(
            settings.database_url,
            settings.data_dir,
            settings.embedding_dim,
            pool_size=1,
            hnsw_ef_search=settings.hnsw_ef_search,
        )
        try:
            async with database.db.begin() as conn:
                return await action(conn)
        finally:
            await database.close()

    return asyncio.run(main())


@app.command("create")
def create(
    name: Annotated[str, typer.Option("--name", help="A label for the key")] = "cli",
    project: ProjectOption = None,
    data_dir: DataDirOption = None,
    init: Annotated[
        bool,
        typer.Option(
            "--init", help="Create the embedded database if the data dir holds none (else refused)"
        ),
    ] = False,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="The key may read but not write (403 on writes)")
    ] = False,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            help="Bind the key to one user_id: it sees and writes only that user's memories "
            "and runs (an agent on that user's device)",
        ),
    ] = None,
) -> None:
    """Create a key and print ONLY the secret on stdout (it is never shown again)."""
    from mnemo.domain.scope import InvalidUserId, normalize_user_id
    from mnemo.store import keys

    try:
        if user is not None and normalize_user_id(user) is None:
            raise InvalidUserId("user_id must not be blank")
    except InvalidUserId as exc:
        typer.echo(f"mnemo keys: --user: {exc}", err=True)
        raise typer.Exit(code=2) from None
    owner = project or settings_with().project
    _, secret = with_database(
        data_dir,
        lambda conn: keys.create(
            conn, owner, name, datetime.now(UTC), writable=not read_only, user_id=user
        ),
        init=init,
    )
    typer.echo(secret)


@app.command("list")
def list_(project: ProjectOption = None, data_dir: DataDirOption = None) -> None:
    """List keys: id, project, name, prefix, created, revoked, access (rw or ro, and the
    bound user if any)."""
    from mnemo.store import keys

    found = with_database(data_dir, lambda conn: keys.list_(conn, project))
    for key in found:
        revoked = key.revoked_at.isoformat() if key.revoked_at else "-"
        typer.echo(
            f"{key.id}\t{key.project}\t{key.name}\t{key.prefix}...\t"
            f"{key.created_at.isoformat()}\t{revoked}\t{_access(key)}"
        )


def _access(key: ApiKey) -> str:
    access = "rw" if key.writable else "ro"
    return access + (f" user={key.user_id}" if key.user_id else "")


@app.command("revoke")
def revoke(key_id: str, data_dir: DataDirOption = None) -> None:
    """Revoke a key by id (see `mnemo keys list`). Servers stop accepting it within 5 s."""
    from mnemo.store import keys

    revoked = with_database(data_dir, lambda conn: keys.revoke(conn, key_id, datetime.now(UTC)))
    if not revoked:
        typer.echo(f"no active key with id {key_id}", err=True)
        raise typer.Exit(code=1)
    typer.echo(f"revoked {key_id}", err=True)
