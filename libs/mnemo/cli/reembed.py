"""`mnemo reembed`: embed every stored vector again with the configured embedder, in place
(register `reembed_command`)."""

from __future__ import annotations

import typer

from mnemo.cli.common import DataDirOption, settings_with


def reembed_command(
    data_dir: DataDirOption = None,
    batch_size: int = typer.Option(256, "--batch-size", min=1, max=4096, help="Texts per batch"),
) -> None:
    """Embed every memory and kept version again with the configured embedder, after
    changing to another model of the same size. Stop every mnemo server and service using
    the database first. An interrupted pass resumes where it stopped when run again."""
    import asyncio

    from mnemo.core.reembed import ReembedRefused, ReembedReport, reembed
    from mnemo.embeddings.factory import embedder_from_settings
    from mnemo.store.database import connect
    from mnemo.store.embedder_identity import EmbedderMismatch

    settings = settings_with(data_dir=data_dir)

    def report_batch(table: str, done: int, total: int) -> None:
        typer.echo(f"{table}: {done} of {total} vectors written", err=True)

    async def main() -> ReembedReport:
        embedder = embedder_from_settings(settings)
        warm_up = getattr(embedder, "warm_up", None)
        if warm_up is not None:
            await warm_up()
        database = await connect(
            settings.database_url, settings.data_dir, embedder.dim, 1, settings.hnsw_ef_search
        )  # without the embedder: its label is what the pass is about to change
        try:
            return await reembed(database.db, embedder, batch_size, report_batch)
        finally:
            await database.close()
            aclose = getattr(embedder, "aclose", None)
            if aclose is not None:
                await aclose()

    try:
        report = asyncio.run(main())
    except (ReembedRefused, EmbedderMismatch) as exc:
        typer.echo(f"mnemo reembed: {exc}", err=True)
        raise typer.Exit(2) from exc
    if not report.rewritten:
        typer.echo(f"nothing to do: the vectors already come from {report.label}")
        return
    counts = ", ".join(f"{n} in {table}" for table, n in report.rewritten.items())
    typer.echo(f"re-embedded with {report.label} (before: {report.previous}): {counts}")
