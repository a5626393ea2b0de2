"""`mnemo backup` and `mnemo restore`: the store's database to one file and back
(`store.backup`), for the embedded data dir or an external Postgres (MNEMO_DATABASE_URL)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mnemo.cli.common import DataDirOption, settings_with

if TYPE_CHECKING:
    from mnemo.settings import Settings

PgBinOption = Annotated[
    Path | None,
    typer.Option(
        "--pg-bin",
        help="Folder of pg_dump/pg_restore (default: the embedded Postgres 16's)",
        file_okay=False,
    ),
]


@contextmanager
def database_url(settings: Settings) -> Iterator[str]:
    """The store's URL: MNEMO_DATABASE_URL, or the embedded Postgres of the data dir
    (joined if a server runs on it, else started and stopped again)."""
    if settings.database_url is not None:
        yield settings.database_url
        return
    from mnemo.store.database import start_embedded

    server, url = start_embedded(settings.data_dir)
    try:
        yield url
    finally:
        server.cleanup()


def _fail(command: str, exc: Exception) -> typer.Exit:
    typer.echo(f"mnemo {command}: {exc}", err=True)
    return typer.Exit(code=2)


def backup_command(
    output: Path = typer.Option(..., "--output", "-o", help="The backup file to write"),
    data_dir: DataDirOption = None,
    pg_bin: PgBinOption = None,
) -> None:
    """Back up the store's database to one file, while mnemo runs. It holds every table in
    one consistent snapshot and a manifest of their row counts; `mnemo restore` checks
    them. Kafka's topics are not in it (docs/guides/operate.md says what that means)."""
    from mnemo.store.backup import BackupError, create_backup

    settings = settings_with(data_dir=data_dir)
    try:
        with database_url(settings) as url:
            manifest = asyncio.run(create_backup(url, output, pg_bin))
    except BackupError as exc:
        raise _fail("backup", exc) from exc
    rows = sum(manifest.tables.values())
    typer.echo(
        f"backed up {len(manifest.tables)} tables ({rows} rows, schema revision "
        f"{manifest.schema_revision}) to {output}"
    )


def restore_command(
    source: Path = typer.Argument(..., exists=True, dir_okay=False, help="A `mnemo backup` file"),
    data_dir: DataDirOption = None,
    pg_bin: PgBinOption = None,
    replace: bool = typer.Option(
        False, "--replace", help="Drop what the target database holds first"
    ),
    distributed: bool = typer.Option(
        False,
        "--distributed",
        help="The stages start on empty topics: fail the runs in flight at the backup, retryably",
    ),
) -> None:
    """Restore a backup into an empty data dir or database (stop mnemo first). Every
    table's row count is checked against the backup's manifest. The next `mnemo serve`
    migrates an older backup's schema; a newer one is refused."""
    from mnemo.store.backup import BackupError, fail_unfinished, read_manifest, restore_backup
    from mnemo.store.migrations_check import known_revision

    settings = settings_with(data_dir=data_dir)
    try:
        manifest = read_manifest(source)
        if manifest.schema_revision is not None and not known_revision(manifest.schema_revision):
            raise BackupError(
                f"the backup's schema is at revision {manifest.schema_revision}, written by "
                f"mnemo {manifest.mnemo_version}; restore it with that release or a newer one"
            )
        with database_url(settings) as url:
            restored = asyncio.run(restore_backup(source, url, pg_bin, replace))
            failed = asyncio.run(fail_unfinished(url)) if distributed else []
    except BackupError as exc:
        raise _fail("restore", exc) from exc
    rows = sum(restored.tables.values())
    typer.echo(
        f"restored {len(restored.tables)} tables ({rows} rows, every count as in the backup of "
        f"{manifest.created_at}) in {restored.seconds:.1f} s"
    )
    if failed:
        typer.echo(
            f"{len(failed)} runs were in flight at the backup and are now failed, retryably: "
            "POST /v1/runs/{run_id}/retry re-drives each from its kept input"
        )
        for run_id in failed:
            typer.echo(f"  {run_id}")
