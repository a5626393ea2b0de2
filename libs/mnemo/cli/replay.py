"""`mnemo replay --group G --into NEW`: re-run a group's retained raw log (register
`replay_command`)."""

from __future__ import annotations

import typer

from mnemo.settings import Settings


def replay_command(
    group: str = typer.Option(..., "--group", help="The group whose retained adds to re-run."),
    into: str = typer.Option(..., "--into", help="A fresh group with the changed pipeline."),
    project: str = typer.Option(None, "--project", help="Only this project's adds."),
) -> None:
    """Re-run GROUP's adds from the raw topic through INTO's pipeline (distributed mode)."""
    import asyncio

    from mnemo.kafka.replayops import replay_group

    run_ids = asyncio.run(replay_group(Settings().kafka, group, into, project))
    typer.echo(f"published {len(run_ids)} add(s) for group '{into}'")
