"""`mnemo replay --group G --into NEW`: re-run a group's retained raw log (register
`replay_command`)."""

from __future__ import annotations

import asyncio

import typer

from mnemo.settings import Settings


def replay_command(
    group: str = typer.Option(..., "--group", help="The group whose retained adds to re-run."),
    into: str = typer.Option(..., "--into", help="A fresh group with the changed pipeline."),
    project: str = typer.Option(None, "--project", help="Only this project's adds."),
) -> None:
    """Re-run GROUP's adds from the raw topic through INTO's pipeline (distributed mode).
    Needs the database too (MNEMO_DATABASE_URL): adds the gateway refused are skipped."""
    from mnemo.kafka.replayops import replay_group
    from mnemo.store.database import connect

    settings = Settings()

    async def main() -> None:
        database = await connect(
            settings.database_url, settings.data_dir, settings.embedding_dim, 2,
            settings.hnsw_ef_search,
        )  # fmt: skip
        try:
            done = await replay_group(settings.kafka, database.db, group, into, project)
        finally:
            await database.close()
        typer.echo(f"published {len(done.run_ids)} add(s) for group '{into}'")
        if done.refused or done.repeated:
            typer.echo(
                f"skipped {done.refused} add(s) the gateway refused (503) and "
                f"{done.repeated} repeated record(s) of runs already published"
            )

    asyncio.run(main())
