"""`mnemo replay --group G --into NEW`: re-run a group's retained raw log (register
`replay_command`)."""

from __future__ import annotations

import typer

from mnemo.cli.common import opened_database, settings_with


def replay_command(
    group: str = typer.Option(..., "--group", help="The group whose retained adds to re-run."),
    into: str = typer.Option(..., "--into", help="A fresh group with the changed pipeline."),
    project: str = typer.Option(None, "--project", help="Only this project's adds."),
) -> None:
    """Re-run GROUP's adds from the raw topic through INTO's pipeline (distributed mode).
    Adds of erased users, adds past the group's raw-input retention, adds the gateway
    refused and repeated records of one run are skipped, counted by reason."""
    import asyncio

    from mnemo.kafka.replayops import ReplayReport, replay_group

    async def replay() -> ReplayReport:
        settings = settings_with()
        async with opened_database(settings) as db:
            return await replay_group(settings.kafka, db, group, into, project)

    report = asyncio.run(replay())
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items()))
    typer.echo(f"published {len(report.run_ids)} add(s) for group '{into}'"
               + (f"; skipped {skipped}" if skipped else ""))  # fmt: skip
